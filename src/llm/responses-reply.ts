import { APIError } from 'openai';
import type { ReasoningItem } from './message.js';
import type { Completion, ModelToolCall } from './model-reply.js';
import {
  argumentsField,
  describeValue,
  isRecord,
  type ReplyNotice,
  ReplyShapeError,
  textField,
  type UsageCounts,
  unusableCall,
  usageCounts,
} from './reply-fields.js';
import { type CallIdScope, settleCallId } from './tool-call-ids.js';

/**
 * Reading a Responses API `response` object (the non-streamed body, or the one a stream's last event
 * carries) into the `Completion` both wires produce: text from `output_text` parts, a refusal,
 * function calls with their ids settled, reasoning items (kept whole: they are sent back) and their
 * summary as the reasoning text, the stop reason in Chat Completions' terms, usage.
 */
export function readResponse(response: unknown, scope: CallIdScope, notice?: ReplyNotice): Completion {
  if (!isRecord(response)) throw new ReplyShapeError('response', response, 'an object');
  if (response.status === 'failed' || response.error) throw responseError(response.error);
  const output = response.output;
  if (!Array.isArray(output)) throw new ReplyShapeError('response.output', output, 'an array of items');
  let content = '';
  let refusal = '';
  const reasoning: string[] = [];
  const reasoningItems: ReasoningItem[] = [];
  const calls: ModelToolCall[] = [];
  const taken = (id: string) => calls.some((c) => c.id === id) || scope.usedCallIds.has(id);
  output.forEach((item: unknown, i) => {
    const where = `response.output[${i}]`;
    if (!isRecord(item) || typeof item.type !== 'string') {
      throw new ReplyShapeError(where, item, 'an item with a string `type`');
    }
    switch (item.type) {
      case 'message': {
        const parts = item.content;
        if (!Array.isArray(parts)) throw new ReplyShapeError(`${where}.content`, parts, 'an array of parts');
        parts.forEach((part: unknown, j) => {
          const at = `${where}.content[${j}]`;
          if (!isRecord(part)) throw new ReplyShapeError(at, part, 'a part object');
          if (part.type === 'output_text') content += textField(part.text, `${at}.text`);
          else if (part.type === 'refusal') refusal += textField(part.refusal, `${at}.refusal`);
          else notice?.(`${at}: a part of type ${JSON.stringify(part.type)} was left out of the answer`);
        });
        return;
      }
      case 'function_call': {
        const callId = typeof item.call_id === 'string' ? item.call_id : undefined;
        const id = settleCallId(callId, calls.length, scope.callIdStem, taken);
        const name = textField(item.name, `${where}.name`);
        calls.push(
          name === ''
            ? { id, ...unusableCall(`${where} (${describeValue(item)})`) }
            : { id, name, argsText: argumentsField(item.arguments, `${where}.arguments`) },
        );
        return;
      }
      case 'reasoning': {
        const kept = reasoningItemOf(item, where);
        reasoningItems.push(kept);
        const text = reasoningTextOf(kept);
        if (text) reasoning.push(text);
        return;
      }
      default:
        notice?.(`${where}: an item of type "${item.type}" was left out of the answer`);
    }
  });
  const completion: Completion = {
    content,
    reasoning: reasoning.join('\n\n'),
    refusal,
    calls,
    finishReason: finishReasonOf(response, calls.length > 0),
    usage: responseUsage(response.usage),
  };
  if (reasoningItems.length > 0) completion.reasoningItems = reasoningItems;
  return completion;
}

/** A reasoning item as the conversation keeps it: what sending it back needs, and its texts. */
export function reasoningItemOf(item: Record<string, unknown>, where: string): ReasoningItem {
  if (typeof item.id !== 'string') throw new ReplyShapeError(`${where}.id`, item.id, 'a string');
  const summary = texts(item.summary, `${where}.summary`, 'summary_text');
  const kept: ReasoningItem = { type: 'reasoning', id: item.id, summary };
  const encrypted = textField(item.encrypted_content, `${where}.encrypted_content`);
  if (encrypted) kept.encrypted_content = encrypted;
  if (Array.isArray(item.content) && item.content.length > 0) {
    kept.content = texts(item.content, `${where}.content`, 'reasoning_text');
  }
  return kept;
}

function texts<T extends string>(value: unknown, where: string, type: T): Array<{ type: T; text: string }> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ReplyShapeError(where, value, 'an array of text parts');
  return value.map((part: unknown, i) => {
    if (!isRecord(part)) throw new ReplyShapeError(`${where}[${i}]`, part, 'a text part');
    return { type, text: textField(part.text, `${where}[${i}].text`) };
  });
}

/** The reasoning a user may read: the summary, else the reasoning text. */
export function reasoningTextOf(item: ReasoningItem): string {
  const parts = item.summary.length > 0 ? item.summary : (item.content ?? []);
  return parts.map((p) => p.text).join('\n\n');
}

/**
 * The stop reason in Chat Completions' terms: `tool_calls` or `stop` for a completed response;
 * `length` for one cut at `max_output_tokens`, `content_filter` for a filtered one.
 */
export function finishReasonOf(response: Record<string, unknown>, hasCalls: boolean): string {
  if (response.status === 'incomplete') {
    const details = response.incomplete_details;
    const reason = isRecord(details) ? details.reason : undefined;
    return reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return hasCalls ? 'tool_calls' : 'stop';
}

/** Responses usage (`input_tokens`, `output_tokens`) in Chat Completions' terms. */
export function responseUsage(value: unknown): UsageCounts | null {
  return usageCounts(value, 'response.usage', {
    input: 'input_tokens',
    output: 'output_tokens',
    details: 'input_tokens_details',
    outputDetails: 'output_tokens_details',
  });
}

/**
 * A failed response's `error` (or a stream's `error` event) as the SDK's `APIError` without a status,
 * which the retry policy classifies by its code (`server_error`, `rate_limit_exceeded`: retried).
 */
export function responseError(error: unknown): APIError {
  const fields = isRecord(error) ? error : {};
  const message =
    typeof fields.message === 'string' ? fields.message : 'the response failed without saying why';
  const code = typeof fields.code === 'string' ? fields.code : null;
  return new APIError(undefined, { message, code, type: code }, message, undefined);
}
