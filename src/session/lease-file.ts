import { hostname } from 'node:os';
import { mkdirDurable, writeFileAtomic } from './durable-write.js';
import { readIfExists } from './read-if-exists.js';
import {
  type LeaseRequest,
  processAlive,
  type SessionLease,
  sessionInUseError,
  staleLeaseError,
  type WriteOptions,
} from './session-lease.js';

/** The lease of a file-store session, beside its snapshot: `{"sessionId","owner","pid","host","token","expiresAt"}`. */
export const LEASE_FILE = 'lease.json';

/**
 * A file store's session lease (the lock file): who holds the session, until when, with which fencing
 * token. Replaced atomically (temp file and rename) and read back after a write, so that of two
 * processes taking it at once one gets `in_use`. A lease of a process that no longer runs on this host
 * is free at once (a crashed CLI does not block the next one for the lease time).
 */
export class LeaseFile {
  readonly #file: string;
  readonly #dir: string;
  readonly #id: string;
  readonly #fsync: boolean;

  constructor(dir: string, file: string, id: string, fsync: boolean) {
    this.#dir = dir;
    this.#file = file;
    this.#id = id;
    this.#fsync = fsync;
  }

  /** The lease in the file, or undefined when there is none (or it does not parse: a lease is never worth an error). */
  async read(): Promise<SessionLease | undefined> {
    const text = await readIfExists(this.#file, 'utf8');
    if (text === undefined) return undefined;
    try {
      const lease = JSON.parse(text) as SessionLease;
      return typeof lease.owner === 'string' && Number.isSafeInteger(lease.token) ? lease : undefined;
    } catch {
      return undefined;
    }
  }

  async acquire(request: LeaseRequest): Promise<SessionLease> {
    const current = await this.read();
    if (current && current.owner !== request.owner && isLive(current))
      throw sessionInUseError(this.#id, current);
    const lease: SessionLease = {
      sessionId: this.#id,
      owner: request.owner,
      pid: process.pid,
      host: hostname(),
      token: (current?.token ?? 0) + 1,
      expiresAt: Date.now() + request.leaseMs,
    };
    await mkdirDurable(this.#dir, this.#fsync);
    await writeFileAtomic(this.#file, JSON.stringify(lease), this.#fsync);
    // Two processes may both have found the lease free: the last rename wins, the other backs off.
    const written = await this.read();
    if (written?.owner !== lease.owner || written.token !== lease.token) {
      throw sessionInUseError(this.#id, written ?? lease);
    }
    return lease;
  }

  async renew(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    await this.check({ lease });
    const renewed = { ...lease, expiresAt: Date.now() + leaseMs };
    await writeFileAtomic(this.#file, JSON.stringify(renewed), this.#fsync);
    return renewed;
  }

  /** Marks the lease lapsed (the file stays, so the next owner's token is higher). */
  async release(lease: SessionLease): Promise<void> {
    const current = await this.read();
    if (current?.owner !== lease.owner || current.token !== lease.token) return;
    await writeFileAtomic(this.#file, JSON.stringify({ ...current, expiresAt: 0 }), this.#fsync);
  }

  /** Throws `stale_lease` when the write's lease no longer holds the session. */
  async check(options: WriteOptions): Promise<void> {
    const lease = options.lease;
    if (!lease) return;
    const current = await this.read();
    if (current?.owner !== lease.owner || current.token !== lease.token)
      throw staleLeaseError(lease, current);
  }
}

/** A lease that still binds: not lapsed, and not held by a process of this host that is gone. */
function isLive(lease: SessionLease): boolean {
  if (lease.expiresAt <= Date.now()) return false;
  if (lease.host === hostname() && lease.pid !== process.pid && !processAlive(lease.pid)) return false;
  return true;
}
