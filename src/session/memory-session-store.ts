import { hostname } from 'node:os';
import type { InboxInput, InboxItem, SessionInboxStore } from './session-inbox.js';
import {
  type LeaseRequest,
  type SessionLease,
  type SessionOwnership,
  sessionInUseError,
  staleLeaseError,
  type WriteOptions,
} from './session-lease.js';
import {
  assertValidSessionId,
  compareListEntries,
  monotonicClock,
  recordBodyJson,
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  saveTimes,
  storedEntryJson,
  storedRecordJson,
  summarizeSession,
  type TranscriptRead,
  transcriptEntryJson,
} from './session-store.js';
import type { TranscriptEntry, TranscriptEntryInput } from './transcript.js';

/** Options of {@link MemorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** Clock for `createdAt`, `updatedAt` and transcript `at`; defaults to the system clock. */
  now?: () => Date;
}

/**
 * A session store that keeps everything in this process, for tests and embedders that do not want
 * files. Values are kept as JSON text, so they come back exactly as from the file store (copies,
 * `undefined` fields dropped) and callers can never change stored data through a reference.
 */
export class MemorySessionStore implements SessionStore, SessionOwnership, SessionInboxStore {
  private readonly records = new Map<string, string>();
  private readonly transcripts = new Map<string, string[]>();
  /** The last lease of each session (kept after release, so that tokens keep growing). */
  private readonly leases = new Map<string, SessionLease>();
  private lastToken = 0;
  private readonly inboxes = new Map<
    string,
    { items: (InboxItem & { done: boolean })[]; answered: Set<string> }
  >();
  private readonly inboxListeners = new Set<(sessionId?: string) => void>();
  private readonly now: () => Date;
  private readonly saveClock: () => Date;

  constructor(options: MemorySessionStoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.saveClock = monotonicClock(this.now);
  }

  async save(input: SessionRecordInput, options: WriteOptions = {}): Promise<SessionRecord> {
    const body = recordBodyJson(input);
    this.checkLease(options);
    const previousJson = this.records.get(input.id);
    const previous = previousJson === undefined ? undefined : (JSON.parse(previousJson) as SessionRecord);
    const times = saveTimes(input, previous, this.saveClock());
    const transcriptSeq = this.transcripts.get(input.id)?.length ?? 0;
    const json = storedRecordJson({ id: input.id, state: input.state, ...times, transcriptSeq }, body);
    this.records.set(input.id, json);
    return JSON.parse(json) as SessionRecord;
  }

  async load(id: string): Promise<SessionRecord | undefined> {
    assertValidSessionId(id);
    const json = this.records.get(id);
    return json === undefined ? undefined : (JSON.parse(json) as SessionRecord);
  }

  async list(): Promise<SessionListEntry[]> {
    const rows = [...this.records.values()].map((json) =>
      summarizeSession(JSON.parse(json) as SessionRecord),
    );
    return rows.sort(compareListEntries);
  }

  async delete(id: string): Promise<boolean> {
    assertValidSessionId(id);
    const hadRecord = this.records.delete(id);
    const hadTranscript = this.transcripts.delete(id);
    this.inboxes.delete(id);
    return hadRecord || hadTranscript;
  }

  async appendTranscript(
    id: string,
    entries: readonly TranscriptEntryInput[],
    options: WriteOptions = {},
  ): Promise<void> {
    assertValidSessionId(id);
    this.checkLease(options);
    const now = this.now();
    // Serialize all first so that a bad entry appends nothing.
    const bodies = entries.map((entry) => transcriptEntryJson(id, entry, now));
    let lines = this.transcripts.get(id);
    if (!lines) {
      lines = [];
      this.transcripts.set(id, lines);
    }
    for (const body of bodies) lines.push(storedEntryJson(lines.length + 1, body));
  }

  async readTranscript(id: string): Promise<TranscriptRead> {
    assertValidSessionId(id);
    const lines = this.transcripts.get(id) ?? [];
    return { entries: lines.map((line) => JSON.parse(line) as TranscriptEntry) };
  }

  async acquireLease(id: string, request: LeaseRequest): Promise<SessionLease> {
    assertValidSessionId(id);
    const current = this.leases.get(id);
    if (current && current.owner !== request.owner && current.expiresAt > Date.now()) {
      throw sessionInUseError(id, current);
    }
    return this.grant(id, request);
  }

  async renewLease(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    this.checkLease({ lease });
    const renewed = { ...lease, expiresAt: Date.now() + leaseMs };
    this.leases.set(lease.sessionId, renewed);
    return { ...renewed };
  }

  async releaseLease(lease: SessionLease): Promise<void> {
    const current = this.leases.get(lease.sessionId);
    if (current?.owner === lease.owner && current.token === lease.token) {
      this.leases.set(lease.sessionId, { ...current, expiresAt: 0 });
    }
  }

  async postInbox(id: string, input: InboxInput): Promise<InboxItem | undefined> {
    assertValidSessionId(id);
    let inbox = this.inboxes.get(id);
    if (!inbox) {
      inbox = { items: [], answered: new Set() };
      this.inboxes.set(id, inbox);
    }
    if (input.kind === 'approval') {
      if (inbox.answered.has(input.toolCallId)) return undefined;
      inbox.answered.add(input.toolCallId);
    }
    const item = { ...structuredClone(input), seq: inbox.items.length + 1, at: this.now().toISOString() };
    inbox.items.push({ ...item, done: false });
    for (const listener of this.inboxListeners) queueMicrotask(() => listener(id));
    return item;
  }

  async readInbox(id: string): Promise<InboxItem[]> {
    assertValidSessionId(id);
    return (this.inboxes.get(id)?.items ?? [])
      .filter((item) => !item.done)
      .map(({ done: _done, ...item }) => structuredClone(item));
  }

  async completeInbox(id: string, seqs: readonly number[], options: WriteOptions = {}): Promise<void> {
    assertValidSessionId(id);
    this.checkLease(options);
    for (const item of this.inboxes.get(id)?.items ?? []) if (seqs.includes(item.seq)) item.done = true;
  }

  async claimSessions(request: LeaseRequest & { limit: number }): Promise<SessionLease[]> {
    const claimed: SessionLease[] = [];
    for (const [id, inbox] of this.inboxes) {
      if (claimed.length >= request.limit) break;
      if (!inbox.items.some((item) => !item.done)) continue;
      const current = this.leases.get(id);
      if (current && current.expiresAt > Date.now()) continue;
      claimed.push(this.grant(id, request));
    }
    return claimed;
  }

  async watchInbox(listener: (sessionId?: string) => void): Promise<() => void> {
    this.inboxListeners.add(listener);
    return () => this.inboxListeners.delete(listener);
  }

  private grant(id: string, request: LeaseRequest): SessionLease {
    const lease: SessionLease = {
      sessionId: id,
      owner: request.owner,
      pid: process.pid,
      host: hostname(),
      token: ++this.lastToken,
      expiresAt: Date.now() + request.leaseMs,
    };
    this.leases.set(id, lease);
    return { ...lease };
  }

  /** Throws `stale_lease` when a write carries a lease that no longer holds its session. */
  private checkLease(options: WriteOptions): void {
    const lease = options.lease;
    if (!lease) return;
    const current = this.leases.get(lease.sessionId);
    if (current?.owner !== lease.owner || current.token !== lease.token)
      throw staleLeaseError(lease, current);
  }
}
