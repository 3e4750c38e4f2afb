import { forkPoints } from '../evals/fork-point.js';
import { expandSnapshot } from '../session/saved-conversation.js';
import type { SessionRecord, SessionStore } from '../session/session-store.js';
import type { TranscriptEntry } from '../session/transcript.js';
import { currentEntries } from '../session/transcript-replay.js';
import type { BusEvent, ForkPoint, SessionInfo, SessionStatus } from './protocol.js';
import type { Sanitizer } from './sanitize.js';
import { eventsFromTranscript, type SnapshotLike, statusOf } from './session-view.js';

/** A session read from disk (see `agentloop inspect`): shown, never driven. */
export interface SavedSessionView {
  info: Omit<SessionInfo, 'live' | 'source'>;
  status: SessionStatus;
  messages: unknown[];
  events: BusEvent[];
  /** Where the session may be forked (`forkPoints` of its transcript, by message). */
  forkPoints?: ForkPoint[];
}

/** A saved session as the inspector shows it: state and context from the snapshot, timeline from the transcript. */
export async function savedSessionView(
  store: SessionStore,
  record: SessionRecord,
  sanitize: Sanitizer,
): Promise<SavedSessionView> {
  let events: SavedSessionView['events'] = [];
  let entries: TranscriptEntry[] = [];
  try {
    entries = (await store.readTranscript(record.id)).entries;
    events = eventsFromTranscript(record.id, entries);
  } catch (error) {
    events = [
      {
        type: 'error',
        sessionId: record.id,
        turn: 0,
        iteration: 0,
        timestamp: Date.parse(record.updatedAt) || 0,
        message: `transcript unreadable: ${error instanceof Error ? error.message : String(error)}`,
      },
    ];
  }
  // The conversation is in the transcript when the record refers to it (what is left of it, if lost).
  const saved = expandSnapshot(record.snapshot, currentEntries(entries)).snapshot;
  const snapshot = (saved ?? {}) as Partial<SnapshotLike>;
  const like: SnapshotLike = {
    value: snapshot.value ?? record.state,
    status: 'stopped',
    context: snapshot.context ?? {},
  };
  const info: SavedSessionView['info'] = {
    id: record.id,
    name: record.agentName ?? 'agent',
    state: record.state,
    updatedAt: record.updatedAt,
  };
  const messages = sanitize(like.context?.messages ?? []) as unknown[];
  // From the sanitized messages: a secret typed into the first message stays out of the list too.
  const title = titleOf(messages) ?? (record.title ? String(sanitize(record.title)) : undefined);
  if (title) info.title = title;
  const parentId = record.meta?.parentSessionId;
  if (typeof parentId === 'string') info.parentId = parentId;
  return {
    info,
    status: statusOf(like, sanitize),
    messages,
    forkPoints: forkPointsByMessage(entries, messages.length),
    events: events.map((e) => sanitize(e) as SavedSessionView['events'][number]),
  };
}

/** The rest points of a transcript by the index of the message they follow (the current session's only). */
function forkPointsByMessage(entries: readonly TranscriptEntry[], shown: number): ForkPoint[] {
  const points = new Set(forkPoints(entries));
  const result: ForkPoint[] = [];
  let index = 0;
  for (const entry of currentEntries(entries)) {
    if (entry.kind !== 'message') continue;
    if (index >= shown) break;
    if (points.has(entry.seq)) result.push({ index, seq: entry.seq });
    index++;
  }
  return result;
}

/** Longest title sent to the page (the list cuts it further to fit its width). */
const TITLE_MAX_CHARS = 80;

/**
 * What a saved session is about: its first user message that says something (a menu pick such as
 * `2` or `y` says nothing), whitespace collapsed and cut to {@link TITLE_MAX_CHARS}; undefined when
 * no user message has text.
 */
export function titleOf(messages: readonly unknown[] | undefined): string | undefined {
  const texts: string[] = [];
  for (const message of messages ?? []) {
    if (!message || typeof message !== 'object') continue;
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (role !== 'user') continue;
    const text = (typeof content === 'string' ? content : partsText(content)).replace(/\s+/g, ' ').trim();
    if (text) texts.push(text);
  }
  const chosen = texts.find((t) => /\p{L}{3}/u.test(t)) ?? texts[0];
  if (chosen === undefined) return undefined;
  const chars = Array.from(chosen);
  return chars.length > TITLE_MAX_CHARS ? `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…` : chosen;
}

/** The text parts of a message's content array. */
function partsText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : ''))
    .join(' ');
}

/**
 * Every readable session of a store, newest first; unreadable ones are reported through `onError`
 * and left out.
 */
export async function loadSavedSessions(
  store: SessionStore,
  sanitize: Sanitizer,
  onError: (id: string, error: string) => void = () => {},
): Promise<SavedSessionView[]> {
  const views: SavedSessionView[] = [];
  for (const row of await store.list()) {
    if (row.error !== undefined) {
      onError(row.id, row.error);
      continue;
    }
    try {
      const record = await store.load(row.id);
      if (record) views.push(await savedSessionView(store, record, sanitize));
    } catch (error) {
      onError(row.id, error instanceof Error ? error.message : String(error));
    }
  }
  return views;
}
