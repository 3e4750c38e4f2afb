import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostName } from './host-name.js';
import { SessionStoreError } from './session-store-error.js';

/**
 * The right to write one session, held by one owner at a time (see docs/scale-out.md). It lapses at
 * `expiresAt` unless renewed; after that another owner may take it, with a higher `token`.
 */
export interface SessionLease {
  sessionId: string;
  /** Who holds it: `<host>:<pid>:<random>`, one per agent (or worker claim). */
  owner: string;
  /** The holder's process id (for "session in use by pid N"). */
  pid: number;
  /** The holder's host name. */
  host: string;
  /**
   * The fencing token: it grows every time the session changes hands, so a write carrying an older
   * token (from a paused or partitioned holder whose lease lapsed and was taken) is refused.
   */
  token: number;
  /** Epoch ms at which the lease lapses unless renewed. */
  expiresAt: number;
}

/** Who asks for a lease, and for how long. */
export interface LeaseRequest {
  owner: string;
  leaseMs: number;
}

/** Options of a store write: with `lease`, the write is refused unless that lease still holds the session. */
export interface WriteOptions {
  lease?: SessionLease | undefined;
}

/**
 * What a store implements to let many processes share sessions: one owner per session, with a lease
 * and a fencing token. Every store that ships implements it.
 */
export interface SessionOwnership {
  /**
   * Takes the session for `leaseMs` (it need not exist yet). Throws {@link SessionStoreError}
   * (`in_use`, naming the holder's pid) while another owner holds a live lease.
   */
  acquireLease(id: string, request: LeaseRequest): Promise<SessionLease>;
  /** Extends a held lease; throws `stale_lease` when it was taken by another owner meanwhile. */
  renewLease(lease: SessionLease, leaseMs: number): Promise<SessionLease>;
  /** Gives the session up (nothing happens when the lease was already taken by another owner). */
  releaseLease(lease: SessionLease): Promise<void>;
}

/** Whether a store can hand out leases. */
export function hasOwnership<T extends object>(store: T): store is T & SessionOwnership {
  const s = store as Partial<SessionOwnership>;
  return (
    typeof s.acquireLease === 'function' &&
    typeof s.renewLease === 'function' &&
    typeof s.releaseLease === 'function'
  );
}

/** A new owner name for this process: `<host>:<pid>:<random>`. */
export function newOwnerName(): string {
  return `${hostName()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** The `in_use` error: the session is held by another owner. */
export function sessionInUseError(
  id: string,
  holder: Pick<SessionLease, 'pid' | 'host' | 'expiresAt'>,
): SessionStoreError {
  const where = holder.host === hostName() ? '' : ` on ${holder.host}`;
  const until = new Date(holder.expiresAt).toISOString();
  return new SessionStoreError(
    'in_use',
    `Session "${id}" is in use by pid ${holder.pid}${where} (its lease runs until ${until} unless renewed). ` +
      'Stop that process, or wait for it to finish; two processes must not carry one session.',
    { sessionId: id },
  );
}

/** The `stale_lease` error: a write or renewal from an owner whose lease was taken over. */
export function staleLeaseError(
  lease: SessionLease,
  current?: { pid: number; token: number },
): SessionStoreError {
  const by = current ? ` by pid ${current.pid} (token ${current.token})` : '';
  return new SessionStoreError(
    'stale_lease',
    `Session "${lease.sessionId}": this owner's lease (token ${lease.token}) was taken over${by}; ` +
      'the write was refused so that newer state is not overwritten.',
    { sessionId: lease.sessionId },
  );
}

/** Whether `pid` is a live process on this host (a lease of a dead local process is free at once). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (dead, not yet reaped: its parent died too and nothing reaps orphans) answers signal 0.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Releases under way in this process, by session id: a new owner of the session waits for them. */
const releasing = new Map<string, Promise<void>>();

/** Records a release under way, so that {@link releasedHere} can wait for it. */
export function trackRelease(sessionId: string, release: Promise<void>): void {
  const done = release.then(
    () => {},
    () => {},
  );
  releasing.set(sessionId, done);
  void done.then(() => {
    if (releasing.get(sessionId) === done) releasing.delete(sessionId);
  });
}

/** Resolves once every release of the session started in this process has settled. */
export function releasedHere(sessionId: string): Promise<void> {
  return releasing.get(sessionId) ?? Promise.resolve();
}
