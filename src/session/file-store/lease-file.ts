import { closeSync, constants, readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { hostName } from '../host-name.js';
import {
  type LeaseRequest,
  processAlive,
  type SessionLease,
  sessionInUseError,
  staleLeaseError,
  type WriteOptions,
} from '../session-lease.js';
import { createFileExclusive, mkdirDurable, writeFileAtomic } from './durable-write.js';
import { openNoFollowSync, refuseLink } from './no-follow.js';
import { isMissing, readIfExists } from './read-if-exists.js';

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
    return parseLease(await readIfExists(this.#file, 'utf8'));
  }

  /**
   * Throws `stale_lease` when the write's lease no longer holds the session. Runs before every write,
   * so it reads the small file in place: microseconds, where a read through the thread pool costs four
   * trips (open, stat, read, close). The file is only ever replaced by a rename, so the read sees a
   * whole lease, the old one or the new.
   */
  check(options: WriteOptions): void {
    const lease = options.lease;
    if (!lease) return;
    const current = parseLease(readTextNow(this.#file));
    if (current?.owner !== lease.owner || current.token !== lease.token)
      throw staleLeaseError(lease, current);
  }

  /**
   * Takes the session for `request.owner`: refused with `in_use` while another owner (with `ifFree`:
   * any owner) holds a live lease. The next token is reserved first by creating `lease.json.<token>.claim`
   * exclusively, so that of two processes taking the session at once exactly one gets it.
   */
  async acquire(request: LeaseRequest, options: { ifFree?: boolean } = {}): Promise<SessionLease> {
    refuseLink(this.#dir, this.#id); // a session folder that is a link would take the lease elsewhere
    await mkdirDurable(this.#dir, this.#fsync);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read();
      if (current && isLive(current) && (options.ifFree || current.owner !== request.owner))
        throw sessionInUseError(this.#id, current);
      const token = await this.#reserve((current?.token ?? 0) + 1);
      if (token === undefined) continue;
      const lease: SessionLease = {
        sessionId: this.#id,
        owner: request.owner,
        pid: process.pid,
        host: hostName(),
        token,
        expiresAt: Date.now() + request.leaseMs,
      };
      try {
        await writeFileAtomic(this.#file, JSON.stringify(lease), this.#fsync);
      } catch (error) {
        await rm(this.#claimFile(token), { force: true }).catch(() => {});
        throw error;
      }
      // A reservation given up as abandoned by another process (a pause of ten seconds) shows here.
      const written = await this.read();
      if (written?.owner !== lease.owner || written.token !== lease.token) {
        throw sessionInUseError(this.#id, written ?? lease);
      }
      await this.#sweepClaims(token);
      return lease;
    }
    throw sessionInUseError(this.#id, { pid: 0, host: hostName(), expiresAt: Date.now() });
  }

  /**
   * Reserves `token`, or the first one above it whose reservation was abandoned (its process gone, or
   * older than {@link RESERVATION_MS}). Throws `in_use` while another process's reservation is under
   * way; undefined when the lease moved on meanwhile (read it again).
   */
  async #reserve(first: number): Promise<number | undefined> {
    for (let token = first; token < first + MAX_ATTEMPTS; token++) {
      const claim = JSON.stringify({ pid: process.pid, host: hostName(), at: Date.now() });
      if (await createFileExclusive(this.#claimFile(token), claim, false)) return token;
      const other = await this.#readClaim(token);
      if (other && !abandoned(other))
        throw sessionInUseError(this.#id, { ...other, expiresAt: other.at + RESERVATION_MS });
      const now = await this.read();
      if (now && now.token >= token) return undefined;
    }
    return undefined;
  }

  #claimFile(token: number): string {
    return `${this.#file}.${token}.claim`;
  }

  async #readClaim(token: number): Promise<Claim | undefined> {
    const text = await readIfExists(this.#claimFile(token), 'utf8').catch(() => undefined);
    try {
      const claim = JSON.parse(text ?? '') as Claim;
      const ok =
        Number.isSafeInteger(claim.pid) && typeof claim.host === 'string' && Number.isFinite(claim.at);
      return ok ? claim : undefined;
    } catch {
      return undefined;
    }
  }

  /** Removes the reservations of tokens below `token` (their leases were written or given up). */
  async #sweepClaims(token: number): Promise<void> {
    const prefix = `${path.basename(this.#file)}.`;
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    const old = names.filter((name) => {
      const n =
        name.startsWith(prefix) && name.endsWith('.claim') ? Number(name.slice(prefix.length, -6)) : NaN;
      return Number.isSafeInteger(n) && n < token;
    });
    await Promise.all(old.map((name) => rm(path.join(this.#dir, name), { force: true }).catch(() => {})));
  }

  async renew(lease: SessionLease, leaseMs: number): Promise<SessionLease> {
    this.check({ lease });
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
}

/** The lease in `text`, or undefined when there is none or it does not parse (a lease is never worth an error). */
function parseLease(text: string | undefined): SessionLease | undefined {
  if (text === undefined) return undefined;
  try {
    const lease = JSON.parse(text) as SessionLease;
    return typeof lease.owner === 'string' && Number.isSafeInteger(lease.token) ? lease : undefined;
  } catch {
    return undefined;
  }
}

/** The file's text, or undefined when it does not exist; a symbolic link is refused naming the file. */
function readTextNow(file: string): string | undefined {
  let fd: number;
  try {
    fd = openNoFollowSync(file, constants.O_RDONLY);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** A token reservation: who is writing the lease of that token, since when. */
interface Claim {
  pid: number;
  host: string;
  at: number;
}

/** Tokens tried (and lease reads repeated) before an acquisition gives up as `in_use`. */
const MAX_ATTEMPTS = 50;

/** How long a live process's reservation may wait for its lease write before others count it abandoned. */
const RESERVATION_MS = 10_000;

function abandoned(claim: Claim): boolean {
  if (claim.at + RESERVATION_MS <= Date.now()) return true;
  return claim.host === hostName() && claim.pid !== process.pid && !processAlive(claim.pid);
}

/** A lease that still binds: not lapsed, and not held by a process of this host that is gone. */
export function isLive(lease: SessionLease): boolean {
  if (lease.expiresAt <= Date.now()) return false;
  if (lease.host === hostName() && lease.pid !== process.pid && !processAlive(lease.pid)) return false;
  return true;
}
