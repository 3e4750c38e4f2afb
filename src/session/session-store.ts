import { randomBytes } from 'node:crypto';
import type { WriteOptions } from './session-lease.js';
import { SessionStoreError, type SessionStoreErrorCode } from './session-store-error.js';
import type { TranscriptEntry, TranscriptEntryInput } from './transcript.js';

/** One saved session: the persisted machine snapshot plus what lists and UIs show about it. */
export interface SessionRecord {
  id: string;
  /** ISO time of the first save; kept by every later save. */
  createdAt: string;
  /** ISO time of the last save; strictly increases from save to save of a session. */
  updatedAt: string;
  /** The machine state at the save, e.g. `'AwaitingInput'`. */
  state: string;
  /**
   * The machine's persisted snapshot, stored as JSON. Past `DEFAULTS.recordMessagesInline` messages
   * its `context.messages` refers to the transcript instead of holding the conversation
   * (`expandSnapshot` in `agentloop/unstable` rebuilds it; docs/persistence.md, "What a save writes").
   */
  snapshot: unknown;
  /**
   * `seq` of the last transcript entry appended before this save (0 when none): entries with a
   * higher `seq` happened after the snapshot and are what a resume after a crash replays.
   */
  transcriptSeq: number;
  agentName?: string;
  /** Where the agent came from (a bundle root or module), for `list` and the inspector. */
  bundle?: string;
  /** Short label for lists, usually the first user message. */
  title?: string;
  /** User turns so far. */
  turns?: number;
  /** Free-form JSON for embedders. */
  meta?: Record<string, unknown>;
}

/** What `save` takes: the store stamps `updatedAt` and `transcriptSeq`, and `createdAt` on the first save. */
export type SessionRecordInput = Omit<SessionRecord, 'createdAt' | 'updatedAt' | 'transcriptSeq'> & {
  /** Used only when the session has no saved record yet (imports); otherwise the stored one is kept. */
  createdAt?: string;
};

/** A readable session as `list` shows it (no snapshot). */
export interface SessionSummary {
  id: string;
  createdAt: string;
  updatedAt: string;
  state: string;
  agentName?: string;
  bundle?: string;
  /** The record's title with whitespace collapsed, cut to {@link TITLE_MAX_CHARS} characters. */
  title?: string;
  turns?: number;
  /** Tokens the session used and what they cost in USD (`costUsd` absent when unknown), from its snapshot. */
  usage?: { totalTokens: number; costUsd?: number };
  error?: undefined;
}

/** A session whose record cannot be read; listed so that one bad file never hides the others. */
export interface UnreadableSession {
  id: string;
  /** What is wrong, naming the file. */
  error: string;
  code: SessionStoreErrorCode;
  file?: string;
  /** The file's modification time, used to place it in the list. */
  updatedAt?: string;
}

/** One row of `list`: check `error` to tell the two apart. */
export type SessionListEntry = SessionSummary | UnreadableSession;

/** A torn last transcript line (a crash mid-append): skipped when reading, repaired on the next append. */
export interface TornTranscriptLine {
  file: string;
  /** 1-based line number. */
  line: number;
  bytes: number;
}

/** What `readTranscript` returns. */
export interface TranscriptRead {
  entries: TranscriptEntry[];
  /** Set when the last line was torn and skipped. */
  torn?: TornTranscriptLine;
}

/** Where a store keeps one session, for messages that name the file (stores with files only). */
export interface SessionFiles {
  /** The record (`snapshot.json` for the file store). */
  snapshot: string;
  /** The transcript (`transcript.jsonl` for the file store). */
  transcript: string;
}

/**
 * Where sessions live. Every implementation passes the conformance kit (`src/store-conformance/`,
 * `agentloop/testing/stores`).
 * Calls for one session take effect in call order; a store has one writer per session at a time.
 */
export interface SessionStore {
  /**
   * Saves (replaces) the session's record atomically and returns it as `load` will return it. With
   * `options.lease` (stores with {@link SessionOwnership}), refused (`stale_lease`) unless that lease
   * still holds the session.
   */
  save(record: SessionRecordInput, options?: WriteOptions): Promise<SessionRecord>;
  /** The saved record, or undefined when there is none. Throws {@link SessionStoreError} when unreadable. */
  load(id: string): Promise<SessionRecord | undefined>;
  /**
   * Every saved session, newest `updatedAt` first (so in reverse save order within one store);
   * unreadable ones appear with an `error`.
   */
  list(): Promise<SessionListEntry[]>;
  /** Removes the record and the transcript; false when there was nothing to remove. */
  delete(id: string): Promise<boolean>;
  /** Appends entries in order, assigning consecutive `seq` numbers; durable when the promise resolves. */
  appendTranscript(
    id: string,
    entries: readonly TranscriptEntryInput[],
    options?: WriteOptions,
  ): Promise<void>;
  /** All entries in append order (none for an unknown session). Throws when a line other than the last is corrupt. */
  readTranscript(id: string): Promise<TranscriptRead>;
  /**
   * Where the session's record and transcript are (paths for a file store), so that errors found
   * above the store (a snapshot the machine cannot run, a missing transcript) name the file.
   * Optional: without it, messages name the session only.
   */
  files?(id: string): SessionFiles;
}

/** The `corrupt` {@link SessionStoreError} for a stored file (or one line of it) that cannot be read. */
export function corruptFileError(id: string, file: string, reason: string, line?: number): SessionStoreError {
  const where = line === undefined ? file : `${file} line ${line}`;
  return new SessionStoreError(
    'corrupt',
    `Session "${id}": ${where} is corrupt (${reason}). It was left as it is; repair or delete it. Other sessions are not affected.`,
    line === undefined ? { sessionId: id, file } : { sessionId: id, file, line },
  );
}

/**
 * The `corrupt` {@link SessionStoreError} for a saved record whose content is wrong (found above the
 * store, e.g. a snapshot the machine cannot run): names the file when the store has one.
 */
export function corruptRecordError(id: string, file: string | undefined, reason: string): SessionStoreError {
  return file === undefined
    ? new SessionStoreError(
        'corrupt',
        `Session "${id}": the saved snapshot is corrupt (${reason}). It was left as it is; repair or delete the session.`,
        { sessionId: id },
      )
    : corruptFileError(id, file, reason);
}

/** Longest title `list` shows. */
export const TITLE_MAX_CHARS = 80;

/** Lowercase so that ids mean the same folder on case-insensitive file systems (macOS, Windows). */
const SESSION_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const WINDOWS_DEVICE_NAME = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/;

/** Throws {@link SessionStoreError} (`invalid_id`) naming the id unless it is usable as a folder name. */
export function assertValidSessionId(id: unknown): asserts id is string {
  if (
    typeof id !== 'string' ||
    !SESSION_ID.test(id) ||
    id.includes('..') ||
    id.endsWith('.') ||
    WINDOWS_DEVICE_NAME.test(id)
  ) {
    const shown = typeof id === 'string' ? JSON.stringify(id) : String(id);
    throw new SessionStoreError(
      'invalid_id',
      `Invalid session id ${shown}: use 1-128 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit, ` +
        `without '..', a trailing '.' or a Windows device name`,
      typeof id === 'string' ? { sessionId: id } : {},
    );
  }
}

/** A new session id: UTC time then random hex, e.g. `20250114-093015-3f9a1c2b` (sorts by creation). */
export function createSessionId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace('T', '-')
    .replace(/\.\d+Z$/, '');
  return `${stamp.toLowerCase()}-${randomBytes(4).toString('hex')}`;
}

/**
 * The `createdAt` and `updatedAt` a save stamps: `createdAt` from the previous record (else the
 * input's, else now); `updatedAt` is now, or 1 ms after the previous one when the clock has not moved.
 */
export function saveTimes(
  input: Pick<SessionRecordInput, 'createdAt'>,
  previous: Pick<SessionRecord, 'createdAt' | 'updatedAt'> | undefined,
  now: Date,
): { createdAt: string; updatedAt: string } {
  let updated = now.getTime();
  if (previous) {
    const last = Date.parse(previous.updatedAt);
    if (Number.isFinite(last) && updated <= last) updated = last + 1;
  }
  const updatedAt = new Date(updated).toISOString();
  return { createdAt: previous?.createdAt ?? input.createdAt ?? updatedAt, updatedAt };
}

/**
 * A clock for save times that never returns the same millisecond twice, so that `updatedAt` order
 * is save order across all the sessions of one store.
 */
export function monotonicClock(now: () => Date): () => Date {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    last = Math.max(now().getTime(), last + 1);
    return new Date(last);
  };
}

/** The `list` row of a record. */
export function summarizeSession(record: SessionRecord): SessionSummary {
  const summary: SessionSummary = {
    id: record.id,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    state: record.state,
  };
  if (record.agentName !== undefined) summary.agentName = record.agentName;
  if (record.bundle !== undefined) summary.bundle = record.bundle;
  if (record.title !== undefined) summary.title = shortTitle(record.title);
  if (record.turns !== undefined) summary.turns = record.turns;
  const usage = sessionUsage(record.snapshot);
  if (usage) summary.usage = usage;
  return summary;
}

/** The session's total usage as its snapshot's context holds it; `undefined` when it holds none that reads. */
function sessionUsage(snapshot: unknown): SessionSummary['usage'] {
  const total = (snapshot as { context?: { totalUsage?: unknown } } | null)?.context?.totalUsage;
  if (typeof total !== 'object' || total === null) return undefined;
  const { totalTokens, costUsd } = total as { totalTokens?: unknown; costUsd?: unknown };
  if (!isCount(totalTokens)) return undefined;
  return isCount(costUsd) ? { totalTokens, costUsd } : { totalTokens };
}

/** Whether `value` is a finite number of at least 0 (a token count or a cost read from a stored file). */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Newest first, then by id, so that the order is total and stable. */
export function compareListEntries(a: SessionListEntry, b: SessionListEntry): number {
  const au = a.updatedAt ?? '';
  const bu = b.updatedAt ?? '';
  if (au !== bu) return au < bu ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function shortTitle(title: string): string {
  const chars = Array.from(title.replace(/\s+/g, ' ').trim());
  return chars.length <= TITLE_MAX_CHARS
    ? chars.join('')
    : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`;
}

/** `JSON.stringify` that throws {@link SessionStoreError} (`not_serializable`) naming the session. */
export function toJson(value: unknown, sessionId: string, what: string): string {
  try {
    return JSON.stringify(value);
  } catch (cause) {
    throw new SessionStoreError(
      'not_serializable',
      `Session "${sessionId}": ${what} is not JSON-serializable: ${(cause as Error).message}`,
      { sessionId, cause },
    );
  }
}

/**
 * Prepends fields to a JSON object text, so that store-assigned fields come first in the file and
 * the caller's data is serialized only once. `json` must be an object's text without those keys.
 */
export function prependJsonFields(fields: Record<string, unknown>, json: string): string {
  const head = JSON.stringify(fields);
  if (head === '{}') return json;
  if (json === '{}') return head;
  return `${head.slice(0, -1)},${json.slice(1)}`;
}

/**
 * The JSON text of a record's caller-given fields (everything but `id`, `state` and the stamped
 * fields), serialized when `save` is called so that later changes to the caller's objects are not saved.
 */
export function recordBodyJson(input: SessionRecordInput): string {
  assertValidSessionId(input.id);
  if (typeof input.state !== 'string') {
    throw new TypeError(`Session "${input.id}": state must be a string, got ${typeof input.state}`);
  }
  const body = {
    agentName: input.agentName,
    bundle: input.bundle,
    title: input.title,
    turns: input.turns,
    meta: input.meta,
    snapshot: input.snapshot ?? null,
  };
  return toJson(body, input.id, 'the record');
}

/**
 * The JSON text of a stored record: the store's fields first (`id`, `state`, the times,
 * `transcriptSeq`), then `body` from {@link recordBodyJson}. Every store writes this layout, so
 * records come back alike, field order included, whichever store holds them.
 */
export function storedRecordJson(
  head: Pick<SessionRecord, 'id' | 'state' | 'createdAt' | 'updatedAt' | 'transcriptSeq'>,
  body: string,
): string {
  const { id, state, createdAt, updatedAt, transcriptSeq } = head;
  return prependJsonFields({ id, state, createdAt, updatedAt, transcriptSeq }, body);
}

/** The JSON text of a transcript entry without `seq` (added when it is written), `at` defaulting to now. */
export function transcriptEntryJson(sessionId: string, input: TranscriptEntryInput, now: Date): string {
  if (typeof input !== 'object' || input === null || typeof input.kind !== 'string') {
    throw new TypeError(`Session "${sessionId}": a transcript entry must be an object with a string "kind"`);
  }
  const { seq: _seq, at, ...rest } = input as TranscriptEntryInput & { seq?: unknown };
  return toJson({ at: at ?? now.toISOString(), ...rest }, sessionId, `a "${input.kind}" transcript entry`);
}

/** The JSON text of a stored transcript entry: `seq` first, then `body` from {@link transcriptEntryJson}. */
export function storedEntryJson(seq: number, body: string): string {
  return prependJsonFields({ seq }, body);
}
