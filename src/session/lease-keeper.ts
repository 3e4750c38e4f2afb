import {
  hasOwnership,
  newOwnerName,
  releasedHere,
  type SessionLease,
  trackRelease,
} from './session-lease.js';
import type { SessionStore } from './session-store.js';

/**
 * Holds one session's lease for an agent: takes it (or uses one given, e.g. a worker's claim), renews
 * it every third of `leaseMs`, and releases it when the agent lets the session go. With a store
 * without ownership it holds nothing and every write goes without a lease.
 */
export class LeaseKeeper {
  readonly #store: SessionStore;
  readonly #id: string;
  readonly #leaseMs: number;
  readonly #onLost: (error: unknown) => void;
  #lease: SessionLease | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(
    store: SessionStore,
    id: string,
    leaseMs: number,
    given: SessionLease | undefined,
    onLost: (error: unknown) => void,
  ) {
    if (given && given.sessionId !== id) {
      throw new Error(`createAgent: the lease is for session "${given.sessionId}", not "${id}"`);
    }
    this.#store = store;
    this.#id = id;
    this.#leaseMs = leaseMs;
    this.#lease = given;
    this.#onLost = onLost;
  }

  /** The lease writes carry (undefined for stores without ownership). */
  get lease(): SessionLease | undefined {
    return this.#lease;
  }

  /** Takes the lease (throws `in_use` naming the holder's pid) and starts renewing it. */
  async take(): Promise<void> {
    const store = this.#store;
    if (!hasOwnership(store)) return;
    // An agent of this process that just stopped may still be giving the session up.
    await releasedHere(this.#id);
    this.#lease ??= await store.acquireLease(this.#id, { owner: newOwnerName(), leaseMs: this.#leaseMs });
    if (this.#closed) return;
    this.#timer = setInterval(() => this.#renew(), Math.max(10, Math.floor(this.#leaseMs / 3)));
    this.#timer.unref?.();
  }

  #renew(): void {
    const store = this.#store;
    const lease = this.#lease;
    if (!lease || this.#closed || !hasOwnership(store)) return;
    store.renewLease(lease, this.#leaseMs).then(
      (renewed) => {
        if (this.#lease === lease) this.#lease = renewed;
      },
      (error: unknown) => {
        if (this.#closed) return;
        clearInterval(this.#timer);
        this.#onLost(error);
      },
    );
  }

  /**
   * Stops renewing and, once `settled` (the writes issued so far), releases the lease. Another agent
   * of this process opening the session waits for that.
   */
  close(settled: Promise<void>): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    const store = this.#store;
    const lease = this.#lease;
    if (!lease || !hasOwnership(store)) return;
    trackRelease(
      this.#id,
      settled.then(() => store.releaseLease(lease)),
    );
  }
}
