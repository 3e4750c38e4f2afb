import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import {
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  SessionStoreError,
  type TranscriptEntry,
  type TranscriptEntryInput,
} from 'agentloop';
import type { LeaseRequest, SessionLease, SessionOwnership, WriteOptions } from 'agentloop/unstable';

// An example for docs/store-conformance.md: a whole session store in one JSON file, small enough to
// read in a few minutes, that passes agentloop's store conformance kit. It is not a production store:
// every call rewrites the file, and two processes must not share one file.

interface Data {
  records: Record<string, SessionRecord>;
  transcripts: Record<string, TranscriptEntry[]>;
  leases: Record<string, SessionLease>;
  /** The last fencing token handed out: tokens keep growing across owners and restarts. */
  lastToken: number;
  /** The last save time (epoch ms): no two saves share a millisecond, so `list` order is save order. */
  lastSave: number;
}

const SESSION_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const DEVICE_NAME = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/;
const TITLE_MAX_CHARS = 80;

/** Calls on one file run one at a time, in call order, whichever store object made them. */
const queues = new Map<string, Promise<unknown>>();

/** Sessions in one JSON file, with leases and fencing (no inbox: the kit skips those cases). */
export class JsonFileSessionStore implements SessionStore, SessionOwnership {
  constructor(readonly file: string) {}

  async save(input: SessionRecordInput, options: WriteOptions = {}): Promise<SessionRecord> {
    checkId(input.id);
    // Serialized now: the caller may change its objects as soon as this returns.
    const { id, state, createdAt, ...fields } = input;
    const body = parseJson(toJson({ ...fields, snapshot: fields.snapshot ?? null }, id));
    return this.update((data) => {
      checkLease(data, options.lease);
      const previous = data.records[id];
      data.lastSave = Math.max(Date.now(), data.lastSave + 1);
      const updatedAt = new Date(data.lastSave).toISOString();
      const record: SessionRecord = {
        id,
        state,
        createdAt: previous?.createdAt ?? createdAt ?? updatedAt,
        updatedAt,
        transcriptSeq: data.transcripts[id]?.length ?? 0,
        ...body,
      };
      data.records[id] = record;
      return record;
    });
  }

  async load(id: string): Promise<SessionRecord | undefined> {
    checkId(id);
    return this.read((data) => data.records[id]);
  }

  async list(): Promise<SessionListEntry[]> {
    return this.read((data) =>
      Object.values(data.records)
        .map((r) => {
          const { id, createdAt, updatedAt, state, agentName, bundle, title, turns } = r;
          return {
            id,
            createdAt,
            updatedAt,
            state,
            agentName,
            bundle,
            title: title && shortTitle(title),
            turns,
          };
        })
        .map((row) => JSON.parse(JSON.stringify(row)) as SessionListEntry)
        .sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? '') || a.id.localeCompare(b.id)),
    );
  }

  async delete(id: string): Promise<boolean> {
    checkId(id);
    return this.update((data) => {
      const had = id in data.records || id in data.transcripts;
      delete data.records[id];
      delete data.transcripts[id];
      return had;
    });
  }

  async appendTranscript(
    id: string,
    entries: readonly TranscriptEntryInput[],
    options: WriteOptions = {},
  ): Promise<void> {
    checkId(id);
    const at = new Date().toISOString();
    // All serialized first, so that one bad entry appends nothing. The store assigns `seq`.
    const bodies = entries.map((entry) => {
      const { seq: _ignored, ...rest } = entry as TranscriptEntryInput & { seq?: number };
      return parseJson(toJson({ at, ...rest }, id)) as Omit<TranscriptEntry, 'seq'>;
    });
    await this.update((data) => {
      checkLease(data, options.lease);
      const lines = data.transcripts[id] ?? [];
      data.transcripts[id] = lines;
      for (const body of bodies) lines.push({ seq: lines.length + 1, ...body } as TranscriptEntry);
    });
  }

  async readTranscript(id: string): Promise<{ entries: TranscriptEntry[] }> {
    checkId(id);
    return this.read((data) => ({ entries: data.transcripts[id] ?? [] }));
  }

  async acquireLease(id: string, request: LeaseRequest): Promise<SessionLease> {
    checkId(id);
    return this.update((data) => {
      const current = data.leases[id];
      if (current && current.owner !== request.owner && current.expiresAt > Date.now()) {
        throw new SessionStoreError('in_use', `Session "${id}" is in use by pid ${current.pid}`, {
          sessionId: id,
        });
      }
      const lease: SessionLease = {
        sessionId: id,
        owner: request.owner,
        pid: process.pid,
        host: hostname(),
        token: ++data.lastToken,
        expiresAt: Date.now() + request.leaseMs,
      };
      data.leases[id] = lease;
      return lease;
    });
  }

  async renewLease(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    return this.update((data) => {
      checkLease(data, lease);
      const renewed = { ...lease, expiresAt: Date.now() + leaseMs };
      data.leases[lease.sessionId] = renewed;
      return renewed;
    });
  }

  async releaseLease(lease: SessionLease): Promise<void> {
    await this.update((data) => {
      const current = data.leases[lease.sessionId];
      if (current?.owner === lease.owner && current.token === lease.token) current.expiresAt = 0;
    });
  }

  /** Runs `change` on the file's data after every call made before it, then writes the file. */
  private update<T>(change: (data: Data) => T): Promise<T> {
    return this.enqueue(async () => {
      const data = await this.readFile();
      const result = change(data);
      const temp = `${this.file}.${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(temp, JSON.stringify(data));
      await rename(temp, this.file); // atomic: a crash leaves the old file or the new one
      return parseJson(JSON.stringify(result ?? null)) as T; // a copy: callers cannot change stored data
    });
  }

  private read<T>(view: (data: Data) => T): Promise<T> {
    return this.enqueue(async () => (await this.readFile().then(view)) ?? undefined) as Promise<T>;
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = (queues.get(this.file) ?? Promise.resolve()).then(work);
    queues.set(
      this.file,
      run.catch(() => undefined),
    );
    return run;
  }

  private async readFile(): Promise<Data> {
    const text = await readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    return text === undefined
      ? { records: {}, transcripts: {}, leases: {}, lastToken: 0, lastSave: 0 }
      : (JSON.parse(text) as Data);
  }
}

function checkId(id: string): void {
  if (!SESSION_ID.test(id) || id.includes('..') || id.endsWith('.') || DEVICE_NAME.test(id)) {
    throw new SessionStoreError('invalid_id', `Invalid session id ${JSON.stringify(id)}`);
  }
}

/** Refuses a write whose lease no longer holds its session (fencing). */
function checkLease(data: Data, lease: SessionLease | undefined): void {
  if (!lease) return;
  const current = data.leases[lease.sessionId];
  if (current?.owner !== lease.owner || current.token !== lease.token) {
    throw new SessionStoreError(
      'stale_lease',
      `Session "${lease.sessionId}": the lease (token ${lease.token}) was taken over; the write was refused`,
      { sessionId: lease.sessionId },
    );
  }
}

function toJson(value: unknown, id: string): string {
  try {
    return JSON.stringify(value);
  } catch (cause) {
    throw new SessionStoreError('not_serializable', `Session "${id}": not JSON: ${String(cause)}`, {
      sessionId: id,
      cause,
    });
  }
}

function parseJson(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

function shortTitle(title: string): string {
  const chars = Array.from(title.replace(/\s+/g, ' ').trim());
  return chars.length <= TITLE_MAX_CHARS
    ? chars.join('')
    : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`;
}
