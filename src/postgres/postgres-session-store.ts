import type { InboxInput, InboxItem, SessionInboxStore } from '../session/session-inbox.js';
import {
  type LeaseRequest,
  type SessionLease,
  type SessionOwnership,
  staleLeaseError,
  type WriteOptions,
} from '../session/session-lease.js';
import {
  assertValidSessionId,
  compareListEntries,
  monotonicClock,
  recordBodyJson,
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  type SessionSummary,
  storedEntryJson,
  type TranscriptRead,
  transcriptEntryJson,
} from '../session/session-store.js';
import { SessionStoreError } from '../session/session-store-error.js';
import { SessionWriteQueue } from '../session/session-write-queue.js';
import {
  type TranscriptEntry,
  type TranscriptEntryInput,
  transcriptEntryProblem,
} from '../session/transcript.js';
import { inTransaction, type PgPool } from './pg-types.js';
import { PostgresInbox } from './postgres-inbox.js';
import { holderOf, leaseOf, PostgresLeases } from './postgres-leases.js';
import { type SavedStamps, savedRecord, saveStatement } from './save-statement.js';
import { migrate, type Tables, tablesOf } from './schema-migrations.js';

export type { PgPool, PgPoolClient, PgQueryable, PgResult } from './pg-types.js';
export { SCHEMA_VERSION } from './schema-migrations.js';

/**
 * Where the store connects: a connection string (the store makes and ends its pool; `max` connections,
 * `connectionTimeoutMillis` to give up on an unreachable server, default: wait) or your `pg.Pool`.
 */
export type PostgresConnection =
  | { connectionString: string; max?: number; connectionTimeoutMillis?: number }
  | { pool: PgPool };

/** Options of {@link PostgresSessionStore}. */
export interface PostgresSessionStoreOptions {
  /** The schema holding the tables (default `agentloop`); created by `migrate()`. */
  schema?: string;
  /** Clock for `createdAt`, `updatedAt` and transcript `at`; defaults to the system clock. */
  now?: () => Date;
  /**
   * Whether saves and inbox completions `NOTIFY` the schema's saves channel, so that clients'
   * `waitFor` need not poll (default true). PostgreSQL serializes the commits of notifying
   * transactions (a lock held through the commit's WAL flush), so at thousands of saves a second
   * turn it off: `waitFor` then polls every `pollMs`.
   */
  notifySaves?: boolean;
}

/**
 * Sessions in PostgreSQL, shared by every process that connects (see docs/scale-out.md): records and
 * transcripts, leases with fencing tokens, and inboxes that workers claim with `FOR UPDATE SKIP
 * LOCKED`. Passes the same conformance suite as the file and memory stores. Needs `pg` 8 (an optional
 * peer dependency). Tables are created by `migrate()` (run on first use too).
 */
export class PostgresSessionStore implements SessionStore, SessionOwnership, SessionInboxStore {
  readonly schema: string;
  readonly #tables: Tables;
  readonly #connection: PostgresConnection;
  readonly #now: () => Date;
  readonly #saveClock: () => Date;
  readonly #notifySaves: boolean;
  readonly #queue = new SessionWriteQueue();
  #pool: Promise<PgPool> | undefined;
  #migrated: Promise<number> | undefined;
  #inbox: PostgresInbox | undefined;
  #leases: PostgresLeases | undefined;

  constructor(connection: PostgresConnection, options: PostgresSessionStoreOptions = {}) {
    this.schema = options.schema ?? 'agentloop';
    this.#tables = tablesOf(this.schema);
    this.#connection = connection;
    this.#now = options.now ?? (() => new Date());
    this.#saveClock = monotonicClock(this.#now);
    this.#notifySaves = options.notifySaves ?? true;
  }

  /** Creates or upgrades the tables (idempotent; many processes may call it at once). Resolves with the schema version. */
  migrate(): Promise<number> {
    this.#migrated ??= this.#db().then((pool) => migrate(pool, this.#tables, this.schema));
    this.#migrated.catch(() => {
      this.#migrated = undefined;
    });
    return this.#migrated;
  }

  /** Ends the pool the store made from a connection string (a pool you gave is yours to end). */
  async close(): Promise<void> {
    await this.#queue.allIdle();
    await this.#inbox?.close();
    if ('connectionString' in this.#connection && this.#pool) await (await this.#pool).end();
  }

  async save(input: SessionRecordInput, options: WriteOptions = {}): Promise<SessionRecord> {
    const body = recordBodyJson(input);
    const id = input.id;
    const pool = await this.#ready();
    const lease = options.lease;
    return this.#queue.run(id, async () => {
      // One statement, one round trip: the fencing check, the stamps and the write (save-statement.ts).
      const now = this.#saveClock().toISOString();
      const statement = saveStatement(this.#tables, input, body, now, lease, this.#notifySaves);
      const { rows } = await pool.query<SavedStamps>(statement.text, statement.values);
      const stamps = rows[0];
      if (!stamps) throw staleLeaseError(lease!, await holderOf(pool, this.#tables, id));
      return savedRecord(input, body, stamps);
    });
  }

  async load(id: string): Promise<SessionRecord | undefined> {
    assertValidSessionId(id);
    const pool = await this.#ready();
    await this.#queue.idle(id);
    const { rows } = await pool.query<{ record: string | null }>(
      `SELECT record FROM ${this.#tables.sessions} WHERE id = $1`,
      [id],
    );
    const text = rows[0]?.record;
    if (text == null) return undefined;
    return this.#decodeRecord(id, text);
  }

  async list(): Promise<SessionListEntry[]> {
    const pool = await this.#ready();
    await this.#queue.allIdle();
    const { rows } = await pool.query<{ id: string; summary: string }>(
      `SELECT id, summary FROM ${this.#tables.sessions} WHERE record IS NOT NULL`,
    );
    const entries = rows.map((row): SessionListEntry => {
      try {
        return JSON.parse(row.summary) as SessionSummary;
      } catch {
        return {
          id: row.id,
          error: this.#corrupt(row.id, 'its list summary is not JSON').message,
          code: 'corrupt',
        };
      }
    });
    return entries.sort(compareListEntries);
  }

  async delete(id: string): Promise<boolean> {
    assertValidSessionId(id);
    const pool = await this.#ready();
    const t = this.#tables;
    return this.#queue.run(id, () =>
      inTransaction(pool, async (client) => {
        const transcript = await client.query(`DELETE FROM ${t.transcript} WHERE session_id = $1`, [id]);
        await client.query(`DELETE FROM ${t.inbox} WHERE session_id = $1`, [id]);
        const session = await client.query<{ had: boolean }>(
          `DELETE FROM ${t.sessions} WHERE id = $1 RETURNING record IS NOT NULL AS had`,
          [id],
        );
        return (transcript.rowCount ?? 0) > 0 || session.rows[0]?.had === true;
      }),
    );
  }

  async appendTranscript(
    id: string,
    entries: readonly TranscriptEntryInput[],
    options: WriteOptions = {},
  ): Promise<void> {
    assertValidSessionId(id);
    const now = this.#now();
    const bodies = entries.map((entry) => transcriptEntryJson(id, entry, now));
    if (bodies.length === 0) return;
    const pool = await this.#ready();
    return this.#queue.append(id, bodies, options, (batch, first) =>
      this.#insertEntries(pool, id, batch, first.lease),
    );
  }

  /** One statement: the session's counter moves by the batch size and the entries take the seqs before it. */
  async #insertEntries(pool: PgPool, id: string, bodies: string[], lease: SessionLease | undefined) {
    const t = this.#tables;
    const bump = lease
      ? `UPDATE ${t.sessions} SET transcript_seq = transcript_seq + $2
           WHERE id = $1 AND lease_owner = $4 AND lease_token = $5 RETURNING transcript_seq`
      : `INSERT INTO ${t.sessions} (id, transcript_seq) VALUES ($1, $2)
           ON CONFLICT (id) DO UPDATE SET transcript_seq = ${t.sessions}.transcript_seq + $2 RETURNING transcript_seq`;
    const values: unknown[] = [id, bodies.length, bodies];
    if (lease) values.push(lease.owner, lease.token);
    const result = await pool.query(
      `WITH bumped AS (${bump})
       INSERT INTO ${t.transcript} (session_id, seq, entry)
       SELECT $1, bumped.transcript_seq - $2 + e.ord, e.body
       FROM bumped, unnest($3::text[]) WITH ORDINALITY AS e(body, ord)`,
      values,
    );
    if (lease && result.rowCount === 0) throw staleLeaseError(lease, await holderOf(pool, this.#tables, id));
  }

  async readTranscript(id: string): Promise<TranscriptRead> {
    assertValidSessionId(id);
    const pool = await this.#ready();
    await this.#queue.idle(id);
    const { rows } = await pool.query<{ seq: string; entry: string }>(
      `SELECT seq, entry FROM ${this.#tables.transcript} WHERE session_id = $1 ORDER BY seq`,
      [id],
    );
    const entries = rows.map((row) => {
      let entry: unknown;
      try {
        entry = JSON.parse(storedEntryJson(Number(row.seq), row.entry));
      } catch {
        throw this.#corrupt(id, `transcript entry ${row.seq} is not JSON`);
      }
      const problem = transcriptEntryProblem(entry);
      if (problem) throw this.#corrupt(id, `transcript entry ${row.seq}: ${problem}`);
      return entry as TranscriptEntry;
    });
    return { entries };
  }

  async acquireLease(id: string, request: LeaseRequest): Promise<SessionLease> {
    assertValidSessionId(id);
    return (await this.#leaseStore()).acquire(id, request);
  }

  async renewLease(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    return (await this.#leaseStore()).renew(lease, leaseMs);
  }

  async releaseLease(lease: SessionLease): Promise<void> {
    const leases = await this.#leaseStore();
    await this.#queue.idle(lease.sessionId);
    await leases.release(lease);
  }

  postInbox(id: string, input: InboxInput): Promise<InboxItem | undefined> {
    assertValidSessionId(id);
    return this.#inboxStore().then((inbox) => inbox.post(id, input, this.#now()));
  }

  readInbox(id: string): Promise<InboxItem[]> {
    assertValidSessionId(id);
    return this.#inboxStore().then((inbox) => inbox.read(id));
  }

  completeInbox(id: string, seqs: readonly number[], options: WriteOptions = {}): Promise<void> {
    assertValidSessionId(id);
    return this.#inboxStore().then((inbox) => inbox.complete(id, seqs, options.lease));
  }

  claimSessions(request: LeaseRequest & { limit: number }): Promise<SessionLease[]> {
    return this.#inboxStore().then((inbox) =>
      inbox.claim(request, (row) => leaseOf(row.id, request.owner, row.token, row.expires)),
    );
  }

  watchInbox(listener: (sessionId?: string) => void): Promise<() => void> {
    return this.#inboxStore().then((inbox) => inbox.watch(listener));
  }

  watchSaves(listener: (sessionId?: string) => void): Promise<() => void> {
    if (!this.#notifySaves)
      return Promise.reject(new Error('this store does not notify saves (notifySaves: false)'));
    return this.#inboxStore().then((inbox) => inbox.watch(listener, this.#tables.savedChannel));
  }

  async #inboxStore(): Promise<PostgresInbox> {
    const pool = await this.#ready();
    this.#inbox ??= new PostgresInbox(pool, this.#tables, this.#notifySaves);
    return this.#inbox;
  }

  async #leaseStore(): Promise<PostgresLeases> {
    const pool = await this.#ready();
    this.#leases ??= new PostgresLeases(pool, this.#tables);
    return this.#leases;
  }

  #decodeRecord(id: string, text: string): SessionRecord {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.#corrupt(id, 'its record is not JSON');
    }
    const record = value as Partial<SessionRecord> | null;
    if (
      typeof record !== 'object' ||
      record === null ||
      record.id !== id ||
      typeof record.state !== 'string' ||
      typeof record.createdAt !== 'string' ||
      typeof record.updatedAt !== 'string' ||
      typeof record.transcriptSeq !== 'number'
    ) {
      throw this.#corrupt(id, 'its record lacks id, state, createdAt, updatedAt or transcriptSeq');
    }
    return record as SessionRecord;
  }

  #corrupt(id: string, reason: string): SessionStoreError {
    return new SessionStoreError(
      'corrupt',
      `Session "${id}" in PostgreSQL schema ${this.schema} is corrupt (${reason}). It was left as it is; repair or delete it.`,
      { sessionId: id },
    );
  }

  async #ready(): Promise<PgPool> {
    const pool = await this.#db();
    await this.migrate();
    return pool;
  }

  #db(): Promise<PgPool> {
    this.#pool ??= (async () => {
      if ('pool' in this.#connection) return this.#connection.pool;
      const { connectionString, max, connectionTimeoutMillis } = this.#connection;
      return createPool(connectionString, max, connectionTimeoutMillis);
    })();
    return this.#pool;
  }
}

/** A `pg.Pool` for the connection string; says how to install `pg` when it is missing. */
async function createPool(
  connectionString: string,
  max = 10,
  connectionTimeoutMillis?: number,
): Promise<PgPool> {
  let pg: { default?: { Pool: new (options: object) => PgPool }; Pool?: new (options: object) => PgPool };
  try {
    pg = (await import('pg')) as typeof pg;
  } catch (cause) {
    throw new Error('PostgresSessionStore needs the `pg` package (8.x): npm install pg', { cause });
  }
  const Pool = pg.default?.Pool ?? pg.Pool;
  if (!Pool) throw new Error('PostgresSessionStore: the installed `pg` package has no Pool');
  const pool = new Pool({
    connectionString,
    max,
    ...(connectionTimeoutMillis ? { connectionTimeoutMillis } : {}),
  });
  // An idle connection that breaks (a restarted server) is replaced by the pool: not a crash.
  (pool as unknown as { on(event: 'error', listener: () => void): void }).on('error', () => {});
  return pool;
}
