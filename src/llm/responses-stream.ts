import type OpenAI from 'openai';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import { copyWith } from '../object-copy.js';
import { CallAssembler, type StreamingCall } from './call-assembler.js';
import type { ReasoningItem } from './message.js';
import type { Completion, StreamAssembler } from './model-reply.js';
import { isRecord, ReplyShapeError, textField, type UsageCounts } from './reply-fields.js';
import {
  finishReasonOf,
  readResponse,
  reasoningItemOf,
  responseError,
  responseUsage,
} from './responses-reply.js';
import { readModelStream, type StreamReadOptions } from './stream-reader.js';

/** A function call being streamed, by its output index. */
interface OutputCall extends StreamingCall {
  outputIndex: number;
}

/**
 * Assembles a streamed Responses API answer from its events: text (`response.output_text.delta`),
 * refusals, reasoning summary or text deltas, function calls by output index. A call is ready when
 * `response.function_call_arguments.done` says its arguments are complete (its id is settled then,
 * in order: every earlier call is settled first). The stream ends with `response.completed` or
 * `response.incomplete` (its stop reason and usage); `response.failed` and `error` events throw the
 * error the retry policy classifies.
 */
export class ResponseAssembler extends CallAssembler<OutputCall> implements StreamAssembler {
  #ended = false;
  #finishReason = '';
  #usage: UsageCounts | null = null;
  #content = '';
  #refusal = '';
  #reasoning: string[] = [];
  readonly #reasoningItems: ReasoningItem[] = [];
  /** The final response, read whole, when the stream told no items (a server that sends only it). */
  #fallback: Completion | undefined;

  get ended(): boolean {
    return this.#ended;
  }

  push(value: unknown): void {
    if (!isRecord(value) || typeof value.type !== 'string') {
      throw new ReplyShapeError('a stream event', value, 'an object with a string `type`');
    }
    const where = value.type;
    switch (value.type) {
      case 'response.output_text.delta':
        this.#text(textField(value.delta, `${where}.delta`), false);
        return;
      case 'response.refusal.delta':
        this.#text(textField(value.delta, `${where}.delta`), true);
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.#reasoning.push(textField(value.delta, `${where}.delta`));
        return;
      case 'response.reasoning_summary_part.added':
        // Parts of one summary read as paragraphs.
        if (this.#reasoning.length > 0) this.#reasoning.push('\n\n');
        return;
      case 'response.output_item.added':
        this.#itemAdded(value, where);
        return;
      case 'response.function_call_arguments.delta':
        this.#call(value, where)?.fragments.push(textField(value.delta, `${where}.delta`));
        return;
      case 'response.function_call_arguments.done': {
        const call = this.#call(value, where);
        if (call && !call.settled) {
          call.fragments = [textField(value.arguments, `${where}.arguments`)];
          this.readyThrough(this.calls.indexOf(call));
        }
        return;
      }
      case 'response.output_item.done':
        this.#itemDone(value, where);
        return;
      case 'response.completed':
      case 'response.incomplete':
        this.#end(value.response, where);
        return;
      case 'response.failed':
        throw responseError(isRecord(value.response) ? value.response.error : undefined);
      case 'error':
        throw responseError(value);
    }
  }

  toCompletion(): Completion {
    if (this.#fallback) return this.#fallback;
    const completion: Completion = {
      content: this.#content,
      reasoning: this.#reasoning.join(''),
      refusal: this.#refusal,
      calls: this.settleAll(),
      finishReason: this.#finishReason,
      usage: this.#usage,
    };
    if (this.#reasoningItems.length > 0) completion.reasoningItems = this.#reasoningItems;
    return completion;
  }

  #text(text: string, refusal: boolean): void {
    if (!text) return;
    if (refusal) this.#refusal += text;
    else this.#content += text;
    this.listen.onText?.(text);
  }

  #itemAdded(event: Record<string, unknown>, where: string): void {
    const item = event.item;
    if (!isRecord(item)) throw new ReplyShapeError(`${where}.item`, item, 'an item object');
    if (item.type !== 'function_call') {
      if (item.type !== 'message' && item.type !== 'reasoning') {
        this.listen.notice?.(
          `an output item of type ${JSON.stringify(item.type)} was left out of the answer`,
        );
      }
      return;
    }
    this.calls.push({
      outputIndex: typeof event.output_index === 'number' ? event.output_index : this.calls.length,
      modelId: typeof item.call_id === 'string' ? item.call_id : '',
      name: textField(item.name, `${where}.item.name`),
      fragments: [textField(item.arguments, `${where}.item.arguments`)],
      settled: undefined,
    });
  }

  #itemDone(event: Record<string, unknown>, where: string): void {
    const item = event.item;
    if (!isRecord(item)) throw new ReplyShapeError(`${where}.item`, item, 'an item object');
    if (item.type === 'reasoning') this.#reasoningItems.push(reasoningItemOf(item, `${where}.item`));
    else if (item.type === 'function_call') {
      const call = this.#call(event, where);
      if (call && !call.settled) {
        if (typeof item.arguments === 'string') call.fragments = [item.arguments];
        this.readyThrough(this.calls.indexOf(call));
      }
    }
  }

  /** The call an event is about, by its output index (the last call when it gives none). */
  #call(event: Record<string, unknown>, where: string): OutputCall | undefined {
    const index = event.output_index;
    const call =
      typeof index === 'number' ? this.calls.find((c) => c.outputIndex === index) : this.calls.at(-1);
    if (call === undefined) this.listen.notice?.(`${where} for an output item that was never added`);
    return call;
  }

  #end(response: unknown, where: string): void {
    if (!isRecord(response)) throw new ReplyShapeError(`${where}.response`, response, 'a response object');
    this.#ended = true;
    const toldNothing =
      this.calls.length === 0 &&
      this.#content === '' &&
      this.#refusal === '' &&
      this.#reasoningItems.length === 0;
    if (toldNothing && Array.isArray(response.output) && response.output.length > 0) {
      this.#fallback = readResponse(response, this.scope, this.listen.notice);
      return;
    }
    this.#finishReason = finishReasonOf(response, this.calls.length > 0);
    this.#usage = responseUsage(response.usage);
  }
}

/** Reads one streamed Responses API answer (`stream: true`), as `readCompletionStream` does. */
export function readResponsesStream(
  client: OpenAI,
  body: ResponseCreateParamsBase,
  options: StreamReadOptions,
): Promise<Completion> {
  return readModelStream(
    (signal) => client.responses.create(copyWith(body, { stream: true as const }), { signal }),
    (onText, onReady) => new ResponseAssembler(options.scope, { onText, onReady, notice: options.notice }),
    options,
  );
}
