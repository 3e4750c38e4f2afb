import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { CallAssembler, type StreamingCall } from './call-assembler.js';
import type { Completion, StreamAssembler } from './model-reply.js';
import {
  argumentsField,
  finishReasonField,
  isRecord,
  ReplyShapeError,
  readContent,
  reasoningField,
  textField,
  type UsageCounts,
  usageField,
} from './reply-fields.js';

type ToolCallDelta = ChatCompletionChunk.Choice.Delta.ToolCall;

/** A call being streamed, by its `index` in the stream. */
interface IndexedCall extends StreamingCall {
  index: number;
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
export class CompletionAssembler extends CallAssembler<IndexedCall> implements StreamAssembler {
  /** The stream's `finish_reason`; `null` until a chunk carries one. */
  finishReason: string | null = null;
  usage: UsageCounts | null = null;
  readonly #content: string[] = [];
  readonly #reasoning: string[] = [];
  readonly #refusal: string[] = [];
  /** The call the last tool-call delta went to (most deltas continue it). */
  #last: IndexedCall | undefined;

  /**
   * Adds one chunk. Content may be text or typed parts, reasoning comes as `reasoning_content` or
   * `reasoning`, a refusal as `refusal` (told as text too); a chunk without choices (a usage-only last
   * chunk, Azure's prompt filter results) only sets usage. A field of a type that cannot be used
   * throws a `ReplyShapeError`.
   */
  push(chunk: ChatCompletionChunk): void {
    const raw = chunk as unknown as Record<string, unknown>;
    const usage = usageField(raw.usage, 'usage');
    if (usage) this.usage = usage;
    const choices = raw.choices;
    if (choices === undefined || choices === null) return;
    if (!Array.isArray(choices)) throw new ReplyShapeError('choices', choices, 'an array');
    const choice: unknown = choices[0];
    if (choice === undefined) return;
    if (!isRecord(choice)) throw new ReplyShapeError('choices[0]', choice, 'a choice object');
    const delta = choice.delta;
    if (isRecord(delta)) this.#addDelta(delta);
    else if (delta !== undefined && delta !== null) {
      throw new ReplyShapeError('choices[0].delta', delta, 'an object');
    }
    const finish = finishReasonField(choice.finish_reason, 'choices[0].finish_reason');
    if (finish) {
      this.finishReason = finish;
      if (finish === 'tool_calls') this.#readyBelow(Number.POSITIVE_INFINITY);
    }
  }

  #addDelta(delta: Record<string, unknown>): void {
    const content = delta.content;
    let text = '';
    let partsReasoning = '';
    if (typeof content === 'string') text = content;
    // Most chunks of a call carry no content at all: nothing to read (and no object made for it).
    else if (content !== undefined && content !== null)
      ({ text, reasoning: partsReasoning } = readContent(
        content,
        'choices[0].delta.content',
        this.listen.notice,
      ));
    if (text) {
      this.#content.push(text);
      this.listen.onText?.(text);
    }
    const refusal = textField(delta.refusal, 'choices[0].delta.refusal');
    if (refusal) {
      this.#refusal.push(refusal);
      this.listen.onText?.(refusal);
    }
    const reasoning = reasoningField(delta, 'choices[0].delta') + partsReasoning;
    if (reasoning) this.#reasoning.push(reasoning);
    const parts = delta.tool_calls;
    if (parts === undefined || parts === null) return;
    if (!Array.isArray(parts)) throw new ReplyShapeError('choices[0].delta.tool_calls', parts, 'an array');
    for (const part of parts) this.#add(part);
  }

  /** Whether a chunk carried a finish reason. */
  get ended(): boolean {
    return this.finishReason !== null;
  }

  /** The completion so far, every call settled (those not ready too, without announcing them). */
  toCompletion(): Completion {
    return {
      content: this.#content.join(''),
      reasoning: this.#reasoning.join(''),
      refusal: this.#refusal.join(''),
      calls: this.settleAll(),
      finishReason: this.finishReason ?? '',
      usage: this.usage,
    };
  }

  /**
   * Adds a tool-call delta to its call: the call at its `index`; without an index (some servers send
   * none), a new call when the delta brings an id other than the last call's or a name while the last
   * call has one, else the last call.
   */
  #add(value: unknown): void {
    const where = 'choices[0].delta.tool_calls[]';
    if (!isRecord(value)) throw new ReplyShapeError(where, value, 'a call delta object');
    const part = value as Partial<ToolCallDelta> & Record<string, unknown>;
    const fn = part.function as unknown;
    if (fn !== undefined && fn !== null && !isRecord(fn)) {
      throw new ReplyShapeError(`${where}.function`, fn, 'an object');
    }
    const name = isRecord(fn) ? textField(fn.name, `${where}.function.name`) : '';
    const args = isRecord(fn) ? argumentsField(fn.arguments, `${where}.function.arguments`) : '';
    const id = typeof part.id === 'string' ? part.id : '';
    const index = typeof part.index === 'number' ? part.index : this.#indexWithout(id, name);
    let call = this.#last;
    if (call === undefined || call.index !== index) {
      call = this.calls.find((c) => c.index === index);
      if (call === undefined) {
        // A call with a higher index begins: every earlier call's arguments are complete.
        this.#readyBelow(index);
        call = { index, modelId: '', name: '', fragments: [], settled: undefined };
        this.calls.push(call);
      }
      this.#last = call;
    }
    if (call.settled) {
      // Out of protocol (a call continued after a later one began): keep the text whole.
      call.settled.argsText += args;
      return;
    }
    if (id) call.modelId = id;
    if (name) call.name += name;
    if (args) call.fragments.push(args);
  }

  /** The index of a delta that has none (see `#add`). */
  #indexWithout(id: string, name: string): number {
    const last = this.#last;
    if (last === undefined) return 0;
    const fresh =
      (id !== '' && last.modelId !== '' && id !== last.modelId) || (name !== '' && last.name !== '');
    return fresh ? Math.max(...this.calls.map((c) => c.index)) + 1 : last.index;
  }

  /** Settles and announces, in order, the open calls that precede the first one at `index` or above. */
  #readyBelow(index: number): void {
    let last = this.settledCount - 1;
    while (last + 1 < this.calls.length && this.calls[last + 1]!.index < index) last++;
    this.readyThrough(last);
  }
}
