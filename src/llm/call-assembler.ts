import type { ModelToolCall } from './model-reply.js';
import { type ReplyNotice, unusableCall } from './reply-fields.js';
import { type CallIdScope, settleCallId } from './tool-call-ids.js';

/** Who hears a stream as it is assembled. */
export interface AssemblyListeners {
  /** Each text delta (refusal text too). */
  onText?: ((text: string) => void) | undefined;
  /** Each call once it is ready (its arguments certainly complete), its id settled. */
  onReady?: ((call: ModelToolCall) => void) | undefined;
  /** Parts of the reply left out of the answer (unknown content part or item types). */
  notice?: ReplyNotice | undefined;
}

/** A call being streamed: the model's id ('' until known), its name, its argument fragments. */
export interface StreamingCall {
  modelId: string;
  name: string;
  /** Argument fragments, joined once when the call is settled. */
  fragments: string[];
  /** The call with its settled id and joined arguments, once it is ready or the stream has ended. */
  settled: ModelToolCall | undefined;
}

/**
 * What the assemblers of both wires share: the calls of one reply in order, settled (id fixed with
 * `settleCallId`: unique in the conversation and among the calls before it; fragments joined once)
 * and announced in order, so each is checked against the ids of the calls before it.
 */
export abstract class CallAssembler<C extends StreamingCall> {
  protected readonly calls: C[] = [];
  /** How many calls are settled: always a prefix of `calls`. */
  protected settledCount = 0;
  protected readonly scope: CallIdScope;
  protected readonly listen: AssemblyListeners;

  constructor(scope: CallIdScope, listen: AssemblyListeners = {}) {
    this.scope = scope;
    this.listen = listen;
  }

  /** Settles and announces, in order, the open calls from the first open one to position `last`. */
  protected readyThrough(last: number): void {
    for (let i = this.settledCount; i <= last && i < this.calls.length; i++)
      this.listen.onReady?.(this.settle(i));
  }

  /** Every call, settled (those not ready too, without announcing them). */
  protected settleAll(): ModelToolCall[] {
    for (let i = this.settledCount; i < this.calls.length; i++) this.settle(i);
    return this.calls.map((c) => c.settled!);
  }

  /** Fixes call `i`'s id and arguments; every call before it is settled already. */
  protected settle(i: number): ModelToolCall {
    const call = this.calls[i]!;
    const id = settleCallId(call.modelId, i, this.scope.callIdStem, this.#taken);
    const settled: ModelToolCall =
      call.name === ''
        ? {
            id,
            ...unusableCall(
              `streamed call ${i} with arguments ${JSON.stringify(call.fragments.join('').slice(0, 80))}`,
            ),
          }
        : { id, name: call.name, argsText: call.fragments.join('') };
    call.settled = settled;
    this.settledCount = i + 1;
    return settled;
  }

  /** Whether an id is held by the conversation or by a call of this message settled before. */
  readonly #taken = (id: string): boolean => {
    for (let i = 0; i < this.settledCount; i++) if (this.calls[i]!.settled!.id === id) return true;
    return this.scope.usedCallIds.has(id);
  };
}
