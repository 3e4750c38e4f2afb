import { randomBytes } from 'node:crypto';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveSessionsDir, type SessionsDirOptions } from '../../sessions-dir.js';
import type { InboxInput, InboxItem, SessionInboxStore } from '../session-inbox.js';
import type { LeaseRequest, SessionLease, SessionOwnership, WriteOptions } from '../session-lease.js';
import {
  assertValidSessionId,
  compareListEntries,
  monotonicClock,
  recordBodyJson,
  type SessionFiles,
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  saveTimes,
  summarizeSession,
  type TranscriptRead,
  transcriptEntryJson,
  type UnreadableSession,
} from '../session-store.js';
import { SessionStoreError } from '../session-store-error.js';
import { SessionWriteQueue } from '../session-write-queue.js';
import type { TranscriptEntryInput } from '../transcript.js';
import { mkdirDurable, removeAtomicWriteLeftovers } from './durable-write.js';
import { FileInbox } from './file-inbox.js';
import { isLive } from './lease-file.js';
import { mapLimit } from './map-limit.js';
import { refuseLink } from './no-follow.js';
import { isMissing } from './read-if-exists.js';
import { freshSessionFileState, leaseHeld, type SessionFileState } from './session-file-state.js';
import {
  decodeSnapshot,
  encodeSnapshot,
  RECORD_SLOT_FILES,
  readRecord,
  readSlotsState,
  SNAPSHOT_FILE,
  writeNextSlot,
} from './snapshot-file.js';
import { readTranscriptFile, TRANSCRIPT_FILE } from './transcript-file.js';

export { resolveSessionsDir } from '../../sessions-dir.js';
export { INBOX_DIR, PENDING_DIR } from './file-inbox.js';
export { LEASE_FILE } from './lease-file.js';
export { SNAPSHOT_FILE, SNAPSHOT_FORMAT_VERSION } from './snapshot-file.js';
export { TRANSCRIPT_FILE } from './transcript-file.js';

/** Where sessions go ({@link resolveSessionsDir}) and how hard writes are pushed to disk. */
export interface FileSessionStoreOptions extends SessionsDirOptions {
  /**
   * Flush each write (and the folder after a new file) before it resolves, so that a power loss
   * cannot lose a recorded tool call. Default true; false only for throwaway sessions.
   */
  fsync?: boolean;
  /** Clock for `createdAt`, `updatedAt` and transcript `at`; defaults to the system clock. */
  now?: () => Date;
  /**
   * Sessions this store keeps what it knows of when idle (the transcript's last `seq`, the record's
   * slots), the most recently used; past it, the one used longest ago is forgotten (its transcript
   * closed) and read again from its files when next used. Sessions with work queued or whose lease
   * this store holds are kept on top. Default {@link DEFAULT_MAX_IDLE_SESSIONS}.
   */
  maxIdleSessions?: number;
}

/** Idle sessions a {@link FileSessionStore} keeps its knowledge of, unless told otherwise. */
export const DEFAULT_MAX_IDLE_SESSIONS = 1024;

const LIST_CONCURRENCY = 16;
/** Transcript files a store keeps open between appends (each is one file descriptor). */
const MAX_OPEN_TRANSCRIPTS = 64;
const noop = () => {};

/**
 * The default session store: one folder per session under {@link resolveSessionsDir}, holding the
 * record in two slot files (`snapshot.json`, `snapshot.1.json`: each save overwrites the one not
 * holding the newest record, in place, sealed with a checksum) and `transcript.jsonl` (append-only).
 * Writes for one session are queued in call order; appends that pile up while a write runs go out
 * together in one write. One owner writes a given session at a time: `lease.json`
 * (the lock file) says who, and writes that carry a lease taken over since are refused. Inboxes
 * (`inbox/`, see {@link FileInbox}) let workers and clients in several processes of one machine share
 * the sessions.
 */
export class FileSessionStore implements SessionStore, SessionOwnership, SessionInboxStore {
  /** The sessions folder. */
  readonly dir: string;
  private readonly fsync: boolean;
  private readonly now: () => Date;
  private readonly saveClock: () => Date;
  private readonly inbox: FileInbox;
  /**
   * Writes for one session in call order; each lane carries what the store knows of the session's
   * files, kept when idle for the `maxIdleSessions` used last and for the sessions leased here.
   */
  readonly #queue: SessionWriteQueue<SessionFileState>;
  /**
   * Per session, the slot file that held its newest record when this store last read or wrote it; of
   * the `maxIdleSessions` sessions read or written last (the one read longest ago is dropped first).
   */
  readonly #recordFiles = new Map<string, string>();
  readonly #maxIdleSessions: number;
  /** Sessions whose transcript file is open, the one used longest ago first. */
  readonly #openTranscripts = new Set<SessionFileState>();

  constructor(options: FileSessionStoreOptions = {}) {
    this.dir = resolveSessionsDir(options);
    this.fsync = options.fsync ?? true;
    this.now = options.now ?? (() => new Date());
    this.saveClock = monotonicClock(this.now);
    this.inbox = new FileInbox(this.dir, this.fsync);
    const max = options.maxIdleSessions ?? DEFAULT_MAX_IDLE_SESSIONS;
    if (!(Number.isSafeInteger(max) && max >= 0) && max !== Number.POSITIVE_INFINITY) {
      throw new RangeError(
        `FileSessionStore: maxIdleSessions must be a whole number of 0 or more (or Infinity), got ${String(max)}`,
      );
    }
    this.#maxIdleSessions = max;
    this.#queue = new SessionWriteQueue<SessionFileState>({
      state: (id) => this.#freshState(id),
      keepIdleLanes: {
        max,
        pinned: leaseHeld,
        dropped: (session) => this.#closeTranscript(session),
      },
    });
  }

  /** Sessions whose state this store holds now (busy, leased here, or among the idle ones kept): for tests. */
  get sessionsKept(): number {
    return this.#queue.laneCount;
  }

  /** The folder of one session. */
  sessionDir(id: string): string {
    assertValidSessionId(id);
    return path.join(this.dir, id);
  }

  /**
   * The session's record file (the slot that held its newest record when this store last read or wrote
   * it, else `snapshot.json`) and `transcript.jsonl`.
   */
  files(id: string): SessionFiles {
    const dir = this.sessionDir(id);
    const snapshot = this.#recordFiles.get(id) ?? path.join(dir, SNAPSHOT_FILE);
    return { snapshot, transcript: path.join(dir, TRANSCRIPT_FILE) };
  }

  async save(input: SessionRecordInput, options: WriteOptions = {}): Promise<SessionRecord> {
    const body = recordBodyJson(input);
    const id = input.id;
    return this.#queue.run(id, async (session) => {
      session.lease.check(options);
      const transcriptSeq = await session.transcript.lastSeq();
      const dir = this.sessionDir(id);
      const slots = session.slots ?? (await readSlotsState(dir, id, this.now));
      const times = saveTimes(input, slots.times, this.saveClock());
      const json = encodeSnapshot(id, input.state, times, transcriptSeq, body);
      if (!session.swept) {
        refuseLink(dir, id); // a session folder that is a link would take the writes elsewhere
        await mkdirDurable(dir, this.fsync);
        // Temp files of format 1's saves (by rename) that a crash left.
        await removeAtomicWriteLeftovers(path.join(dir, SNAPSHOT_FILE));
        session.swept = true;
      }
      session.slots = undefined; // read again if this save fails half-way
      const written = await writeNextSlot(dir, slots, json, times, this.fsync);
      session.slots = written;
      const file = path.join(dir, RECORD_SLOT_FILES[written.newest ?? 0]);
      this.#noteRecordFile(id, file);
      return decodeSnapshot(json, file, id);
    });
  }

  async load(id: string): Promise<SessionRecord | undefined> {
    assertValidSessionId(id);
    await this.#queue.idle(id);
    const read = await readRecord(this.sessionDir(id), id);
    if (read) this.#noteRecordFile(id, read.file);
    return read?.record;
  }

  async list(): Promise<SessionListEntry[]> {
    await this.#queue.allIdle();
    let names: string[];
    try {
      names = (await readdir(this.dir, { withFileTypes: true }))
        .filter((dirent) => dirent.isDirectory() && isValidSessionId(dirent.name))
        .map((dirent) => dirent.name);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const rows = await mapLimit(names, LIST_CONCURRENCY, (id) => this.listRow(id));
    return rows.filter((row) => row !== undefined).sort(compareListEntries);
  }

  async delete(id: string): Promise<boolean> {
    assertValidSessionId(id);
    return this.#queue.run(id, async (session) => {
      // Renaming first makes the removal all-or-nothing for readers, even if the process dies mid-rm.
      const trash = path.join(this.dir, `.deleted-${id}-${randomBytes(4).toString('hex')}`);
      try {
        await rename(this.sessionDir(id), trash);
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
      this.#closeTranscript(session);
      this.#recordFiles.delete(id);
      Object.assign(session, this.#freshState(id));
      await rm(trash, { recursive: true, force: true });
      return true;
    });
  }

  async appendTranscript(
    id: string,
    entries: readonly TranscriptEntryInput[],
    options: WriteOptions = {},
  ): Promise<void> {
    assertValidSessionId(id);
    const now = this.now();
    const bodies = entries.map((entry) => transcriptEntryJson(id, entry, now));
    if (bodies.length === 0) return;
    return this.#queue.append(id, bodies, options, this.#writeAppends);
  }

  /** Writes a batch of appends (the queue's batching; `options` are those of its first append). */
  readonly #writeAppends = (bodies: string[], options: WriteOptions, session: SessionFileState) => {
    session.lease.check(options);
    this.#keepOpen(session);
    return session.transcript.append(bodies);
  };

  async readTranscript(id: string): Promise<TranscriptRead> {
    assertValidSessionId(id);
    await this.#queue.idle(id);
    return readTranscriptFile(this.file(id, TRANSCRIPT_FILE), id);
  }

  async acquireLease(id: string, request: LeaseRequest): Promise<SessionLease> {
    assertValidSessionId(id);
    return this.#queue.run(id, async (session) => {
      const lease = await session.lease.acquire(request);
      session.slots = undefined;
      session.heldUntil = lease.expiresAt;
      return lease;
    });
  }

  async renewLease(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    return this.#queue.run(lease.sessionId, async (session) => {
      const renewed = await session.lease.renew(lease, leaseMs);
      session.heldUntil = renewed.expiresAt;
      return renewed;
    });
  }

  async releaseLease(lease: SessionLease): Promise<void> {
    return this.#queue.run(lease.sessionId, async (session) => {
      this.#closeTranscript(session);
      session.heldUntil = 0;
      await session.lease.release(lease);
    });
  }

  async postInbox(id: string, input: InboxInput): Promise<InboxItem | undefined> {
    assertValidSessionId(id);
    return this.inbox.post(id, input, this.now());
  }

  async readInbox(id: string): Promise<InboxItem[]> {
    assertValidSessionId(id);
    return this.inbox.read(id);
  }

  async completeInbox(id: string, seqs: readonly number[], options: WriteOptions = {}): Promise<void> {
    assertValidSessionId(id);
    return this.#queue.run(id, async (session) => {
      session.lease.check(options);
      await this.inbox.complete(id, seqs);
    });
  }

  /** Takes sessions with open items whose lease is free; of two processes claiming one session, one gets it. */
  async claimSessions(request: LeaseRequest & { limit: number }): Promise<SessionLease[]> {
    const claimed: SessionLease[] = [];
    let failure: unknown;
    for (const id of await this.inbox.pendingSessions()) {
      if (claimed.length >= request.limit) break;
      if (!isValidSessionId(id)) continue;
      const lease = await this.#claimIfFree(id, request).catch((error: unknown) => {
        failure ??= error;
        return undefined;
      });
      if (lease) claimed.push(lease);
    }
    // One session that cannot be read does not keep the others from being claimed.
    if (claimed.length === 0 && failure !== undefined) throw failure;
    return claimed;
  }

  /** Takes session `id` when its lease is free and its inbox has open items; else undefined. */
  #claimIfFree(id: string, request: LeaseRequest): Promise<SessionLease | undefined> {
    return this.#queue.run(id, async (session) => {
      const current = await session.lease.read();
      if (current && isLive(current)) return undefined;
      if (!(await this.inbox.hasWork(id))) {
        await this.inbox.settlePending(id);
        return undefined;
      }
      const lease = await session.lease.acquire(request, { ifFree: true }).catch((error: unknown) => {
        if ((error as { code?: unknown }).code === 'in_use') return undefined;
        throw error;
      });
      if (lease) session.heldUntil = lease.expiresAt;
      return lease;
    });
  }

  /** Wakes `listener` when a session gets inbox items (fs.watch; workers poll as well). */
  watchInbox(listener: () => void): Promise<() => void> {
    return this.inbox.watch(listener);
  }

  /**
   * Marks the session's transcript as the one used last; past {@link MAX_OPEN_TRANSCRIPTS} open files,
   * the one used longest ago is closed once its queued writes are done (it opens again when next written).
   */
  #keepOpen(session: SessionFileState): void {
    this.#openTranscripts.delete(session);
    this.#openTranscripts.add(session);
    if (this.#openTranscripts.size <= MAX_OPEN_TRANSCRIPTS) return;
    const oldest = this.#openTranscripts.values().next().value as SessionFileState;
    this.#openTranscripts.delete(oldest);
    void this.#queue.run(oldest.id, (state) => state.transcript.close());
  }

  #closeTranscript(session: SessionFileState): void {
    this.#openTranscripts.delete(session);
    session.transcript.close();
  }

  /** Notes the slot that holds session `id`'s newest record, as the one noted last. */
  #noteRecordFile(id: string, file: string): void {
    const files = this.#recordFiles;
    files.delete(id);
    files.set(id, file);
    if (files.size > this.#maxIdleSessions) files.delete(files.keys().next().value as string);
  }

  private file(id: string, name: string): string {
    return path.join(this.dir, id, name);
  }

  #freshState(id: string): SessionFileState {
    return freshSessionFileState(this.sessionDir(id), id, { fsync: this.fsync, now: this.now });
  }

  private async listRow(id: string): Promise<SessionListEntry | undefined> {
    try {
      const read = await readRecord(this.sessionDir(id), id);
      // A folder without a record (only a transcript, or a first save under way) is not a session yet.
      return read && summarizeSession(read.record);
    } catch (error) {
      const file = (error instanceof SessionStoreError && error.file) || this.file(id, SNAPSHOT_FILE);
      const row: UnreadableSession =
        error instanceof SessionStoreError
          ? { id, error: error.message, code: error.code, file }
          : {
              id,
              error: `Session "${id}": cannot read ${file}: ${(error as Error).message}`,
              code: 'io',
              file,
            };
      const mtime = await stat(file).then((stats) => stats.mtime.toISOString(), noop);
      if (mtime) row.updatedAt = mtime;
      return row;
    }
  }
}

function isValidSessionId(name: string): boolean {
  try {
    assertValidSessionId(name);
    return true;
  } catch {
    return false;
  }
}
