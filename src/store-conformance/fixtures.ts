import type { SessionListEntry, SessionRecordInput, SessionSummary } from '../session/session-store.js';
import type { TranscriptEntryInput } from '../session/transcript.js';

/** A record input for session `id`, with `fields` over a minimal valid one. */
export function record(id: string, fields: Partial<SessionRecordInput> = {}): SessionRecordInput {
  return { id, state: 'AwaitingInput', snapshot: { status: 'active' }, ...fields };
}

/** A transcript `event` entry named `name`. */
export function event(name: string): TranscriptEntryInput {
  return { kind: 'event', event: name };
}

/** The event name of an entry (undefined for other kinds). */
export function eventName(entry: { kind: string; event?: string }): string | undefined {
  return entry.kind === 'event' ? entry.event : undefined;
}

/** A `list` row that must be readable. */
export function readable(row: SessionListEntry): SessionSummary {
  if (row.error !== undefined) throw new Error(`unexpected unreadable session ${row.id}: ${row.error}`);
  return row;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
