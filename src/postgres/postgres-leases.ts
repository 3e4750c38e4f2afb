import { hostName } from '../session/host-name.js';
import {
  type LeaseRequest,
  type SessionLease,
  sessionInUseError,
  staleLeaseError,
} from '../session/session-lease.js';
import type { PgPool } from './pg-types.js';
import type { Tables } from './schema-migrations.js';

/** A lease as this process holds it (tokens come from the schema's sequence: never reused, even after a delete). */
export function leaseOf(id: string, owner: string, token: string | number, expires: number): SessionLease {
  return {
    sessionId: id,
    owner,
    pid: process.pid,
    host: hostName(),
    token: Number(token),
    expiresAt: Math.floor(expires),
  };
}

/** Who holds the session's lease now (for the `in_use` and `stale_lease` messages). */
export async function holderOf(pool: PgPool, t: Tables, id: string) {
  const { rows } = await pool.query<{
    lease_pid: number | null;
    lease_host: string | null;
    lease_token: string;
    expires: number | null;
  }>(
    `SELECT lease_pid, lease_host, lease_token, extract(epoch FROM lease_expires)::float8 * 1000 AS expires
     FROM ${t.sessions} WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    pid: row.lease_pid ?? 0,
    host: row.lease_host ?? '?',
    token: Number(row.lease_token),
    expiresAt: Math.floor(row.expires ?? 0),
  };
}

/**
 * The lease half of {@link PostgresSessionStore}. Times are the database's (`now()`), so workers on
 * machines with skewed clocks agree on when a lease lapsed.
 */
export class PostgresLeases {
  readonly #pool: PgPool;
  readonly #t: Tables;

  constructor(pool: PgPool, tables: Tables) {
    this.#pool = pool;
    this.#t = tables;
  }

  async acquire(id: string, request: LeaseRequest): Promise<SessionLease> {
    const t = this.#t;
    const { rows } = await this.#pool.query<{ lease_token: string; expires: number }>(
      `INSERT INTO ${t.sessions} AS s (id, lease_owner, lease_pid, lease_host, lease_token, lease_expires)
       VALUES ($1, $2, $3, $4, nextval('${t.schema}."fencing_tokens"'), now() + $5 * interval '1 millisecond')
       ON CONFLICT (id) DO UPDATE SET lease_owner = EXCLUDED.lease_owner, lease_pid = EXCLUDED.lease_pid,
         lease_host = EXCLUDED.lease_host, lease_token = EXCLUDED.lease_token, lease_expires = EXCLUDED.lease_expires
       WHERE s.lease_owner IS NULL OR s.lease_expires < now() OR s.lease_owner = EXCLUDED.lease_owner
       RETURNING lease_token, extract(epoch FROM lease_expires)::float8 * 1000 AS expires`,
      [id, request.owner, process.pid, hostName(), request.leaseMs],
    );
    const row = rows[0];
    if (row) return leaseOf(id, request.owner, row.lease_token, row.expires);
    const holder = await holderOf(this.#pool, t, id);
    throw sessionInUseError(id, {
      pid: holder?.pid ?? 0,
      host: holder?.host ?? '?',
      expiresAt: holder?.expiresAt ?? 0,
    });
  }

  async renew(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    const { rows } = await this.#pool.query<{ expires: number }>(
      `UPDATE ${this.#t.sessions} SET lease_expires = now() + $4 * interval '1 millisecond'
       WHERE id = $1 AND lease_owner = $2 AND lease_token = $3
       RETURNING extract(epoch FROM lease_expires)::float8 * 1000 AS expires`,
      [lease.sessionId, lease.owner, lease.token, leaseMs],
    );
    if (!rows[0]) throw staleLeaseError(lease, await holderOf(this.#pool, this.#t, lease.sessionId));
    return { ...lease, expiresAt: Math.floor(rows[0].expires) };
  }

  async release(lease: SessionLease): Promise<void> {
    await this.#pool.query(
      `UPDATE ${this.#t.sessions} SET lease_owner = NULL, lease_pid = NULL, lease_host = NULL, lease_expires = NULL
       WHERE id = $1 AND lease_owner = $2 AND lease_token = $3`,
      [lease.sessionId, lease.owner, lease.token],
    );
  }
}
