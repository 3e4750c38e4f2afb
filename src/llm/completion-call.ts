import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import type { Completion, ModelToolCall } from './model-reply.js';
import { type CallIdScope, settleCallId } from './tool-call-ids.js';

/**
 * Makes one non-streaming completion (`stream: false`) through the SDK. The function calls of the
 * answer get their ids settled in order (`settleCallId`); other kinds of calls are left out.
 */
export async function requestCompletion(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  signal: AbortSignal,
  scope: CallIdScope,
): Promise<Completion> {
  const completion = await client.chat.completions.create({ ...body, stream: false }, { signal });
  const choice = completion.choices[0];
  if (!choice) throw new Error('the completion has no choices');
  const message = choice.message;
  const calls: ModelToolCall[] = [];
  if (message.tool_calls?.length) {
    const taken = (id: string) => calls.some((c) => c.id === id) || scope.usedCallIds.has(id);
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      calls.push({
        id: settleCallId(call.id, calls.length, scope.callIdStem, taken),
        name: call.function.name,
        argsText: call.function.arguments,
      });
    }
  }
  return {
    content: message.content ?? '',
    reasoning: (message as { reasoning_content?: string }).reasoning_content ?? '',
    calls,
    finishReason: choice.finish_reason,
    usage: completion.usage,
  };
}
