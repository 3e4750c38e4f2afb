import type { Message } from '../llm/message.js';
import type { PersistedAgentSnapshot } from '../machines/agent-snapshot.js';
import type { TranscriptEntry } from './transcript.js';

// A saved record does not hold the conversation: the transcript does. `record.snapshot.context.messages`
// is a reference to it, so a save writes the machine state and the new transcript lines, whatever the
// length of the session (issue 28). Records saved before hold the messages themselves and load as
// they are.

/**
 * What a saved snapshot holds in place of `context.messages`: the conversation is the first
 * `fromTranscript` messages of the session's transcript (after its last `session_started` event);
 * `exact` holds, by position, the messages the transcript has redacted (a secret in a message is
 * written `[REDACTED]` there), as they were.
 */
export interface ConversationReference {
  fromTranscript: number;
  exact?: Record<string, Message>;
}

/** The snapshot a save writes: `persisted` (its conversation left out) with a reference to `count` messages. */
export function compactSnapshot(
  persisted: PersistedAgentSnapshot,
  count: number,
  exact: ReadonlyMap<number, Message>,
): unknown {
  const reference: ConversationReference = { fromTranscript: count };
  for (const [index, message] of exact) {
    if (index >= count) continue;
    reference.exact ??= {};
    reference.exact[index] = message;
  }
  return { ...persisted, context: { ...persisted.context, messages: reference } };
}

/** What {@link expandSnapshot} gives: the snapshot with its conversation. */
export interface ExpandedSnapshot {
  /** The saved snapshot with `context.messages` an array (as saved by older versions, or rebuilt). */
  snapshot: unknown;
  /** Messages the reference names that the transcript no longer holds (it lost entries). */
  missing: number;
}

/**
 * The saved snapshot with its conversation: a reference is resolved against `entries` (the current
 * session's, see `currentEntries`), each message as the transcript wrote it (verbatim, every field),
 * or as `exact` holds it. A snapshot holding its messages (older versions) is returned as it is; one
 * whose reference is malformed too, for the snapshot check to name the field.
 */
export function expandSnapshot(saved: unknown, entries: readonly TranscriptEntry[]): ExpandedSnapshot {
  const context = (saved as { context?: { messages?: unknown } } | null)?.context;
  const reference = context?.messages;
  if (!isConversationReference(reference)) return { snapshot: saved, missing: 0 };
  const exact = reference.exact ?? {};
  const messages: Message[] = [];
  for (const entry of entries) {
    if (messages.length === reference.fromTranscript) break;
    if (entry.kind === 'message') messages.push(exact[messages.length] ?? (entry.message as Message));
  }
  return {
    snapshot: { ...(saved as object), context: { ...context, messages } },
    missing: reference.fromTranscript - messages.length,
  };
}

/** Whether a saved `context.messages` is a {@link ConversationReference} (rather than the messages). */
export function isConversationReference(value: unknown): value is ConversationReference {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { fromTranscript, exact } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(fromTranscript) || (fromTranscript as number) < 0) return false;
  if (exact === undefined) return true;
  return (
    typeof exact === 'object' &&
    exact !== null &&
    !Array.isArray(exact) &&
    Object.keys(exact).every((key) => /^\d+$/.test(key))
  );
}

/**
 * The messages of a saved conversation that the transcript does not hold as they are (it holds them
 * redacted), by position: those a reference keeps in `exact`, or, for a record holding the messages
 * itself (short sessions, earlier versions), those that differ from the transcript's. What the next
 * save that refers to the transcript keeps. Once per load.
 */
export function exactMessages(saved: unknown, entries: readonly TranscriptEntry[]): Map<number, Message> {
  const exact = new Map<number, Message>();
  const messages = (saved as { context?: { messages?: unknown } } | null)?.context?.messages;
  if (isConversationReference(messages)) {
    for (const [key, message] of Object.entries(messages.exact ?? {})) exact.set(Number(key), message);
    return exact;
  }
  if (!Array.isArray(messages)) return exact;
  let index = 0;
  for (const entry of entries) {
    if (index === messages.length) break;
    if (entry.kind !== 'message') continue;
    if (JSON.stringify(entry.message) !== JSON.stringify(messages[index])) exact.set(index, messages[index]);
    index++;
  }
  return exact;
}
