import type { Message } from '../../llm/message.js';

// The AG-UI ids of the session's messages. A message the server holds is named by its position in the
// conversation (`msg-<index>`): the same on every process and after every restore, with nothing more to
// store, because messages are append-only. A text streamed again after a discarded attempt gets a
// suffix (`msg-4.2`) and still names position 4.

const SERVER_ID = /^msg-(\d+)(?:\.\d+)?$/;

/** The AG-UI id of the message at `index` (`attempt` > 1: a stream retried after a reset). */
export function messageId(index: number, attempt = 1): string {
  return attempt > 1 ? `msg-${index}.${attempt}` : `msg-${index}`;
}

/** The position a server id names, or undefined for any other id. */
export function messageIndexOf(id: string): number | undefined {
  const match = SERVER_ID.exec(id);
  return match ? Number(match[1]) : undefined;
}

/** Where the message carrying `toolCallId` is, and the call's position in it (searching from the end). */
export function toolCallPlace(
  messages: readonly Message[],
  toolCallId: string,
): { assistantIndex: number; position: number } | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'assistant' || !message.tool_calls) continue;
    const position = message.tool_calls.findIndex((call) => call.id === toolCallId);
    if (position >= 0) return { assistantIndex: index, position };
  }
  return undefined;
}

/** The id of the tool message that answers `toolCallId` (its results follow the assistant message in call order). */
export function toolResultId(messages: readonly Message[], toolCallId: string): string {
  const place = toolCallPlace(messages, toolCallId);
  return place ? messageId(place.assistantIndex + 1 + place.position) : `result-${toolCallId}`;
}

/** The text of a message's content (text parts joined; other parts are left out). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : ''))
    .join('');
}
