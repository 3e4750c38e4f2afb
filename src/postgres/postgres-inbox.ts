import { hostName } from '../session/host-name.js';
import type { InboxInput, InboxItem } from '../session/session-inbox.js';
import { type LeaseRequest, type SessionLease, staleLeaseError } from '../session/session-lease.js';
import type { PgPool, PgPoolClient } from './pg-types.js';
import type { Tables } from './schema-migrations.js';

/** A claimed session as the claim statement returns it. */
export interface ClaimedRow {
  id: string;
  token: string;
  expires: number;
}

/**
 * The inbox half of {@link PostgresSessionStore}: posts (a second answer to one approval is refused by
 * a unique index), reads, completion fenced by the lease, claims with `FOR UPDATE SKIP LOCKED`, and
 * wakeups through LISTEN/NOTIFY.
 */
export class PostgresInbox {
  readonly #pool: PgPool;
  readonly #t: Tables;
  #listener: Promise<PgPoolClient> | undefined;
  /** Listeners by channel (quoted, as in LISTEN). */
  readonly #listeners = new Map<string, Set<(sessionId?: string) => void>>();

  readonly #notifySaves: boolean;

  constructor(pool: PgPool, tables: Tables, notifySaves = true) {
    this.#pool = pool;
    this.#t = tables;
    this.#notifySaves = notifySaves;
  }

  async post(id: string, input: InboxInput, now: Date): Promise<InboxItem | undefined> {
    const t = this.#t;
    const at = now.toISOString();
    const approvalOf = input.kind === 'approval' ? input.toolCallId : null;
    const { rows } = await this.#pool.query<{ seq: string }>(
      `WITH s AS (
         INSERT INTO ${t.sessions} AS s (id, inbox_seq) VALUES ($1, 1)
         ON CONFLICT (id) DO UPDATE SET inbox_seq = s.inbox_seq + 1 RETURNING inbox_seq)
       , posted AS (
         INSERT INTO ${t.inbox} (session_id, seq, item, approval_of, posted_at)
         SELECT $1, s.inbox_seq, $2, $3, $4 FROM s
         ON CONFLICT (session_id, approval_of) WHERE approval_of IS NOT NULL DO NOTHING
         RETURNING seq)
       -- The wakeup goes with the post (one round trip; delivered at its commit).
       SELECT seq, pg_notify($5, $1) FROM posted`,
      [id, JSON.stringify(input), approvalOf, at, this.#t.channel.slice(1, -1)],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { ...input, seq: Number(row.seq), at };
  }

  async read(id: string): Promise<InboxItem[]> {
    const { rows } = await this.#pool.query<{ seq: string; item: string; posted_at: string }>(
      `SELECT seq, item, posted_at FROM ${this.#t.inbox} WHERE session_id = $1 AND done_at IS NULL ORDER BY seq`,
      [id],
    );
    return rows.map((row) => ({
      ...(JSON.parse(row.item) as InboxInput),
      seq: Number(row.seq),
      at: row.posted_at,
    }));
  }

  async complete(id: string, seqs: readonly number[], lease: SessionLease | undefined): Promise<void> {
    const t = this.#t;
    const { rows } = await this.#pool.query<{ held: boolean }>(
      `WITH held AS (
         SELECT 1 FROM ${t.sessions} WHERE id = $1 AND ($3::text IS NULL OR (lease_owner = $3 AND lease_token = $4)))
       , done AS (
         UPDATE ${t.inbox} SET done_at = now()
         WHERE session_id = $1 AND seq = ANY($2::bigint[]) AND done_at IS NULL AND EXISTS (SELECT 1 FROM held)
         RETURNING 1)
       -- Clients waiting for the session to rest with its inbox applied hear it (the saves' channel).
       , notified AS (SELECT pg_notify($5, $1) FROM (SELECT 1 FROM done LIMIT 1) d WHERE $5::text IS NOT NULL)
       SELECT EXISTS (SELECT 1 FROM held) AS held, (SELECT count(*) FROM done) AS done,
         (SELECT count(*) FROM notified) AS notified`,
      [
        id,
        seqs,
        lease?.owner ?? null,
        lease?.token ?? 0,
        this.#notifySaves ? t.savedChannel.slice(1, -1) : null,
      ],
    );
    if (lease && !rows[0]?.held) throw staleLeaseError(lease);
  }

  async claim(
    request: LeaseRequest & { limit: number },
    toLease: (row: ClaimedRow) => SessionLease,
  ): Promise<SessionLease[]> {
    const t = this.#t;
    const { rows } = await this.#pool.query<ClaimedRow>(
      `WITH c AS (
         SELECT s.id FROM ${t.sessions} s
         WHERE (s.lease_owner IS NULL OR s.lease_expires < now())
           AND EXISTS (SELECT 1 FROM ${t.inbox} i WHERE i.session_id = s.id AND i.done_at IS NULL)
         ORDER BY s.lease_expires NULLS FIRST
         LIMIT $5
         FOR UPDATE OF s SKIP LOCKED)
       UPDATE ${t.sessions} s SET lease_owner = $1, lease_pid = $2, lease_host = $3,
         lease_token = nextval('${t.schema}."fencing_tokens"'), lease_expires = now() + $4 * interval '1 millisecond'
       FROM c WHERE s.id = c.id
       RETURNING s.id, s.lease_token AS token, extract(epoch FROM s.lease_expires)::float8 * 1000 AS expires`,
      [request.owner, process.pid, hostName(), request.leaseMs, request.limit],
    );
    return rows.map(toLease);
  }

  /**
   * LISTEN on one dedicated connection, shared by every watcher of this store: `channel` is the
   * inbox's (the default) or the saves' (`Tables.savedChannel`).
   */
  async watch(listener: (sessionId?: string) => void, channel = this.#t.channel): Promise<() => void> {
    let listeners = this.#listeners.get(channel);
    const first = !listeners;
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(listener);
    this.#listener ??= (async () => {
      const client = await this.#pool.connect();
      client.on('notification', (message) => {
        const set = this.#listeners.get(`"${message.channel}"`);
        for (const l of set ?? []) l(message.payload || undefined);
      });
      // A lost connection only ends the wakeups: workers and clients poll as well.
      client.on('error', () => {});
      return client;
    })();
    const client = await this.#listener;
    if (first) await client.query(`LISTEN ${channel}`);
    return () => {
      listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    const listening = this.#listener;
    this.#listener = undefined;
    if (!listening) return;
    const client = await listening.catch(() => undefined);
    client?.release(true);
  }
}
