import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { Completion, ModelToolCall } from './model-reply.js';
import { type CallIdScope, settleCallId } from './tool-call-ids.js';

type ToolCallDelta = ChatCompletionChunk.Choice.Delta.ToolCall;

/** A call being streamed. */
interface StreamingCall {
  /** Its `index` in the stream. */
  index: number;
  /** The model's id ('' until a delta carries one). */
  modelId: string;
  name: string;
  /** Argument fragments, joined once when the call is settled. */
  fragments: string[];
  /** The call with its settled id and joined arguments, once it is ready or the stream has ended. */
  settled: ModelToolCall | undefined;
}

/**
 * Assembles a streamed chat completion. Text and reasoning deltas are kept as fragments; tool calls
 * are built by their `index` (the first delta of a call carries its id and name, later ones argument
 * fragments), and each call's fragments are joined once. Nothing is parsed or re-scanned: the work is
 * linear in the size of the stream.
 *
 * A call is ready, its arguments certainly complete, when a call with a higher index begins, and the
 * calls still open are when `finish_reason: 'tool_calls'` arrives. Arguments that happen to parse are
 * not enough (`length` may still cut the message), and a message that ends otherwise (`length`,
 * `content_filter`, `stop`) makes no call ready. A ready call gets its id settled (`settleCallId`:
 * unique in the conversation) and goes to `onReady`; calls are settled in order, so each is checked
 * against the ids of the calls before it.
 */
export class CompletionAssembler {
  /** The stream's `finish_reason`; `null` until a chunk carries one. */
  finishReason: string | null = null;
  usage: CompletionUsage | null | undefined = null;
  readonly #content: string[] = [];
  readonly #reasoning: string[] = [];
  readonly #calls: StreamingCall[] = [];
  /** How many calls are settled: always a prefix of `#calls`. */
  #settled = 0;
  /** The call the last tool-call delta went to (most deltas continue it). */
  #last: StreamingCall | undefined;
  readonly #scope: CallIdScope;
  readonly #onText: ((text: string) => void) | undefined;
  readonly #onReady: ((call: ModelToolCall) => void) | undefined;

  /**
   * `scope` checks and makes the calls' ids. `onText` hears each text delta, `onReady` each call once
   * it is ready; a chunk's text is told before the calls it makes ready.
   */
  constructor(scope: CallIdScope, onText?: (text: string) => void, onReady?: (call: ModelToolCall) => void) {
    this.#scope = scope;
    this.#onText = onText;
    this.#onReady = onReady;
  }

  /** Adds one chunk. */
  push(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) return;
    const delta = choice.delta;
    if (delta) {
      const text = delta.content;
      if (text) {
        this.#content.push(text);
        this.#onText?.(text);
      }
      const reasoning = (delta as { reasoning_content?: string | null }).reasoning_content;
      if (reasoning) this.#reasoning.push(reasoning);
      const parts = delta.tool_calls;
      if (parts) for (const part of parts) this.#add(part);
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      if (choice.finish_reason === 'tool_calls') this.#readyBelow(Number.POSITIVE_INFINITY);
    }
  }

  /** The completion so far, every call settled (those not ready too, without announcing them). */
  toCompletion(): Completion {
    const calls = this.#calls;
    for (let i = this.#settled; i < calls.length; i++) this.#settle(i);
    return {
      content: this.#content.join(''),
      reasoning: this.#reasoning.join(''),
      calls: calls.map((c) => c.settled!),
      finishReason: this.finishReason ?? '',
      usage: this.usage,
    };
  }

  #add(part: ToolCallDelta): void {
    let call = this.#last;
    if (call === undefined || call.index !== part.index) {
      call = this.#calls.find((c) => c.index === part.index);
      if (call === undefined) {
        // A call with a higher index begins: every earlier call's arguments are complete.
        this.#readyBelow(part.index);
        call = { index: part.index, modelId: '', name: '', fragments: [], settled: undefined };
        this.#calls.push(call);
      }
      this.#last = call;
    }
    const fn = part.function;
    if (call.settled) {
      // Out of protocol (a call continued after a later one began): keep the text whole.
      if (fn?.arguments) call.settled.argsText += fn.arguments;
      return;
    }
    if (part.id) call.modelId = part.id;
    if (fn) {
      if (fn.name) call.name += fn.name;
      if (fn.arguments) call.fragments.push(fn.arguments);
    }
  }

  /** Settles and announces, in order, the open calls that precede the first one at `index` or above. */
  #readyBelow(index: number): void {
    const calls = this.#calls;
    for (let i = this.#settled; i < calls.length && calls[i]!.index < index; i++) {
      const ready = this.#settle(i);
      this.#onReady?.(ready);
    }
  }

  /** Fixes call `i`'s id and arguments; every call before it is settled already. */
  #settle(i: number): ModelToolCall {
    const call = this.#calls[i]!;
    const settled: ModelToolCall = {
      id: settleCallId(call.modelId, i, this.#scope.callIdStem, this.#taken),
      name: call.name,
      argsText: call.fragments.join(''),
    };
    call.settled = settled;
    this.#settled = i + 1;
    return settled;
  }

  /** Whether an id is held by the conversation or by a call of this message settled before. */
  readonly #taken = (id: string): boolean => {
    for (let i = 0; i < this.#settled; i++) if (this.#calls[i]!.settled!.id === id) return true;
    return this.#scope.usedCallIds.has(id);
  };
}
