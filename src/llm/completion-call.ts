import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { copyWith } from '../object-copy.js';
import type { Completion, ModelToolCall } from './model-reply.js';
import {
  argumentsField,
  describeValue,
  finishReasonField,
  isRecord,
  type ReplyNotice,
  ReplyShapeError,
  readContent,
  reasoningField,
  textField,
  unusableCall,
  usageField,
} from './reply-fields.js';
import { responseIdentityOf } from './response-identity.js';
import { type CallIdScope, settleCallId } from './tool-call-ids.js';

/**
 * Makes one non-streaming completion (`stream: false`) through the SDK and reads it (`readCompletion`).
 */
export async function requestCompletion(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  signal: AbortSignal,
  scope: CallIdScope,
  notice?: ReplyNotice,
): Promise<Completion> {
  const completion: unknown = await client.chat.completions.create(
    copyWith(body, { stream: false as const }),
    { signal },
  );
  return Object.assign(readCompletion(completion, scope, notice), responseIdentityOf(completion));
}

/**
 * Reads a `chat.completion` body as servers send it: `content` as a string or typed parts, reasoning
 * in `reasoning_content` or `reasoning`, a `refusal`, and every tool call with a function name or
 * arguments whatever its `type` says or lacks (Mistral sends none); the calls get their ids settled
 * in order (`settleCallId`). A field of a type that cannot be used is a `ReplyShapeError`.
 */
export function readCompletion(completion: unknown, scope: CallIdScope, notice?: ReplyNotice): Completion {
  if (!isRecord(completion)) throw new ReplyShapeError('body', completion, 'an object');
  const choices = completion.choices;
  if (!Array.isArray(choices)) throw new ReplyShapeError('choices', choices, 'an array');
  const choice: unknown = choices[0];
  if (!isRecord(choice)) throw new ReplyShapeError('choices[0]', choice, 'a choice object');
  const message = choice.message;
  if (!isRecord(message)) throw new ReplyShapeError('choices[0].message', message, 'an object');
  const where = 'choices[0].message';
  const content = readContent(message.content, `${where}.content`, notice);
  const refusal = textField(message.refusal, `${where}.refusal`);
  const finishReason = finishReasonField(choice.finish_reason, 'choices[0].finish_reason');
  return {
    content: content.text,
    reasoning: reasoningField(message, where) + content.reasoning,
    refusal,
    calls: readToolCalls(message.tool_calls, scope),
    finishReason: finishReason ?? '',
    usage: usageField(completion.usage, 'usage'),
  };
}

/** The function calls of a message: each with a name or arguments, whatever its `type` says. */
function readToolCalls(value: unknown, scope: CallIdScope): ModelToolCall[] {
  if (value === undefined || value === null) return [];
  const where = 'choices[0].message.tool_calls';
  if (!Array.isArray(value)) throw new ReplyShapeError(where, value, 'an array of calls');
  const calls: ModelToolCall[] = [];
  const taken = (id: string) => calls.some((c) => c.id === id) || scope.usedCallIds.has(id);
  value.forEach((call: unknown, i) => {
    const at = `${where}[${i}]`;
    if (!isRecord(call)) throw new ReplyShapeError(at, call, 'a call object');
    const id = settleCallId(
      typeof call.id === 'string' ? call.id : undefined,
      calls.length,
      scope.callIdStem,
      taken,
    );
    const fn = call.function;
    if (!isRecord(fn) || typeof fn.name !== 'string' || fn.name === '') {
      // Not a function call agentloop can run (no function name): answered with an error, not dropped.
      calls.push({ id, ...unusableCall(`${at} (${describeValue(call)})`) });
      return;
    }
    calls.push({ id, name: fn.name, argsText: argumentsField(fn.arguments, `${at}.function.arguments`) });
  });
  return calls;
}
