import { type Message as AgUiMessage, type BaseEvent, EventType, type RunAgentInput } from '@ag-ui/core';
import type { Message } from '../../llm/message.js';
import { contentText, messageId } from './message-ids.js';

/**
 * Whether a run asks for the thread's messages (`forwardedProps: { messagesSnapshot: true }`): the run
 * then sends `MESSAGES_SNAPSHOT` after `RUN_STARTED`, so a client that lost its copy (a reload, a
 * second tab) starts from the server's.
 */
export function wantsMessagesSnapshot(input: Pick<RunAgentInput, 'forwardedProps'>): boolean {
  const props = input.forwardedProps as { messagesSnapshot?: unknown } | undefined;
  return props !== null && typeof props === 'object' && props.messagesSnapshot === true;
}

/**
 * The conversation as AG-UI messages, every one named by its place (`msg-<index>`, as the run events
 * name them), system and developer messages left out; `user`: the run's new message, with the client's
 * id, appended. Text goes through `scrub`.
 */
export function messagesSnapshot(
  messages: readonly Message[],
  scrub: (text: string) => string,
  user?: { id: string; text: string },
): BaseEvent {
  const out: AgUiMessage[] = [];
  messages.forEach((message, index) => {
    const id = messageId(index);
    if (message.role === 'user') {
      out.push({ id, role: 'user', content: scrub(contentText(message.content)) });
    } else if (message.role === 'assistant') {
      const text = contentText(message.content);
      const calls = (message.tool_calls ?? []).flatMap((call) =>
        call.type === 'function'
          ? [
              {
                id: call.id,
                type: 'function' as const,
                function: { name: call.function.name, arguments: scrub(call.function.arguments) },
              },
            ]
          : [],
      );
      out.push({
        id,
        role: 'assistant',
        ...(text !== '' ? { content: scrub(text) } : {}),
        ...(calls.length > 0 ? { toolCalls: calls } : {}),
      });
    } else if (message.role === 'tool') {
      out.push({
        id,
        role: 'tool',
        toolCallId: message.tool_call_id,
        content: scrub(contentText(message.content)),
      });
    }
  });
  if (user) out.push({ id: user.id, role: 'user', content: scrub(user.text) });
  return { type: EventType.MESSAGES_SNAPSHOT, messages: out, timestamp: Date.now() } as BaseEvent;
}
