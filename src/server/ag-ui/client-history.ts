import type { Message as AgUiMessage } from '@ag-ui/core';
import type { Message } from '../../llm/message.js';
import { contentText, messageIndexOf } from './message-ids.js';

/** What a run's `messages` add to the session, once checked against the conversation it holds. */
export interface HistoryDelta {
  /** The new user message (at most one a run), with the client's id. */
  user?: { id: string; text: string };
  /** Results the client gives for tool calls the session waits on (frontend tools), by call id. */
  toolResults: Map<string, string>;
}

/** A client history that contradicts the session's: the first message that differs, and how. */
export class HistoryConflict extends Error {
  override readonly name = 'HistoryConflict';
  readonly messageId: string;

  constructor(messageId: string, reason: string) {
    super(`message "${messageId}" contradicts the thread's history: ${reason}`);
    this.messageId = messageId;
  }
}

/**
 * Checks the client's copy of the conversation against the session's (the source of truth) and
 * returns what is new. Messages the session holds are recognised, never appended again: assistant and
 * tool messages by the server's ids (`msg-<index>`) or, for tool messages, by their call id; user
 * messages (which keep the client's ids) by their place among the session's user messages and their
 * text. System and developer messages are the server's concern and are skipped. A message that
 * claims a place the session holds differently is a {@link HistoryConflict} naming it. `ignore`: calls
 * whose tool messages are an interrupt's answer a client adds on its own (CopilotKit), not results.
 */
export function historyDelta(
  stored: readonly Message[],
  client: readonly AgUiMessage[],
  ignore: ReadonlySet<string> = new Set(),
): HistoryDelta {
  const delta: HistoryDelta = { toolResults: new Map() };
  const answered = new Set(stored.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  let next = 0; // the stored position after the last message recognised
  for (const message of client) {
    if (message.role === 'system' || message.role === 'developer') continue;
    if (message.role === 'activity' || message.role === 'reasoning') continue;
    const index = messageIndexOf(message.id);
    if (index !== undefined && message.role !== 'user') {
      const held = stored[index];
      if (!held) throw new HistoryConflict(message.id, `the thread has no message at position ${index}`);
      if (held.role !== message.role) {
        throw new HistoryConflict(
          message.id,
          `the thread's message there is a ${held.role} message, not ${message.role}`,
        );
      }
      if (delta.user) throw new HistoryConflict(message.id, 'it comes after a new user message');
      next = Math.max(next, index + 1);
      continue;
    }
    if (message.role === 'tool') {
      if (ignore.has(message.toolCallId) || answered.has(message.toolCallId)) continue;
      if (!callWaits(stored, message.toolCallId)) {
        throw new HistoryConflict(
          message.id,
          `no call "${message.toolCallId}" of the thread waits for a result`,
        );
      }
      delta.toolResults.set(message.toolCallId, contentText(message.content));
      continue;
    }
    if (message.role === 'assistant') {
      throw new HistoryConflict(
        message.id,
        'assistant messages come from the server (it holds no message with this id)',
      );
    }
    // A user message: the session's next user message, or a new one.
    const text = contentText(message.content);
    const held = stored.findIndex((m, i) => i >= next && m.role === 'user');
    if (held >= 0) {
      if (delta.user) throw new HistoryConflict(message.id, 'it comes after a new user message');
      if (contentText(stored[held]!.content) !== text) {
        throw new HistoryConflict(
          message.id,
          `its text differs from the thread's user message at position ${held}`,
        );
      }
      next = held + 1;
      continue;
    }
    if (delta.user)
      throw new HistoryConflict(message.id, `a run takes one new user message (after "${delta.user.id}")`);
    delta.user = { id: message.id, text };
  }
  return delta;
}

/** Whether the session's last assistant message made `toolCallId` and nothing answered it yet. */
function callWaits(stored: readonly Message[], toolCallId: string): boolean {
  for (let i = stored.length - 1; i >= 0; i--) {
    const message = stored[i]!;
    if (message.role === 'assistant')
      return (message.tool_calls ?? []).some((call) => call.id === toolCallId);
  }
  return false;
}
