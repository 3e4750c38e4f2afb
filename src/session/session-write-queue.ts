import type { SessionLease, WriteOptions } from './session-lease.js';

/** Appends that arrived while earlier work for the session was running; written together. */
interface AppendBatch {
  /** Appends join a batch only under the same lease (owner and token), or all without one. */
  lease: SessionLease | undefined;
  bodies: string[];
  done: Promise<void>;
}

/** One session's queue. */
interface Lane<S> {
  readonly id: string;
  /** Settles, with `state`, when the last work queued for the session has. */
  tail: Promise<S>;
  /** The appends waiting to join one write, until that write starts. */
  batch: AppendBatch | undefined;
  /** Work queued and not settled yet. */
  pending: number;
  /** Ends a call's turn in the lane, giving the state to the next: made once a lane, not once a call. */
  settled: () => S;
  /** The session's state, as every task of the lane is given it. */
  state: S;
  /** Whether the lane is in the list of idle lanes that may be dropped (when idle lanes are kept). */
  listed: boolean;
  /** The idle lane used just before this one, in that list. */
  older: Lane<S> | undefined;
  /** The idle lane used just after this one, in that list. */
  newer: Lane<S> | undefined;
}

/** Which idle lanes a {@link SessionWriteQueue} keeps, when it keeps them. */
export interface IdleLanes<S> {
  /**
   * Idle lanes kept, the most recently used; past it, the lane used longest ago is dropped (and made
   * afresh, with fresh state, when its session is next used). Busy and pinned lanes do not count.
   */
  max: number;
  /** Lanes whose state this holds for, checked each time the lane goes idle, are kept whatever the count. */
  pinned?: (state: S) => boolean;
  /** Called with the state of a lane as it is dropped, to let go of what it holds (a descriptor); must not throw (a throw is ignored). */
  dropped?: (state: S) => void;
}

/** What a {@link SessionWriteQueue} carries for each session. */
export interface SessionWriteQueueOptions<S> {
  /** Makes a session's state when its lane opens; every task of the session is given it. */
  state?: (id: string) => S;
  /**
   * Keep a lane (and its state) once its work is done: the most recently used up to a count
   * ({@link IdleLanes}; `max: Infinity` keeps all). Without it, a lane is dropped when its last queued
   * work settles and made afresh on the next call (with fresh state).
   */
  keepIdleLanes?: IdleLanes<S>;
}

/**
 * One in-process write queue per session, shared by the file and PostgreSQL stores: calls take effect
 * in call order and reads wait for the writes called before them (the store contract), whatever runs
 * in parallel below. Appends that pile up while the session's queue is busy, under the same lease, go
 * out together in one write. This is the path of every store write: a call costs two promises (its
 * result and the lane's next tail) and no closure; a new batch of appends, one closure more.
 */
export class SessionWriteQueue<S = undefined> {
  readonly #lanes = new Map<string, Lane<S>>();
  readonly #state: ((id: string) => S) | undefined;
  /** Whether idle lanes are kept (up to `#maxIdle`), or dropped as soon as they are idle. */
  readonly #keepIdle: boolean;
  readonly #maxIdle: number;
  /**
   * The idle lanes that may be dropped, linked through their `older` and `newer` (a list of their
   * own: moving one is a few field writes, where a `Map` delete and set cost a rehash now and then).
   */
  #oldestIdle: Lane<S> | undefined;
  #newestIdle: Lane<S> | undefined;
  #idleCount = 0;
  readonly #pinned: ((state: S) => boolean) | undefined;
  readonly #dropped: ((state: S) => void) | undefined;

  constructor(options: SessionWriteQueueOptions<S> = {}) {
    this.#state = options.state;
    const keep = options.keepIdleLanes;
    this.#keepIdle = keep !== undefined;
    this.#maxIdle = keep?.max ?? 0;
    this.#pinned = keep?.pinned;
    this.#dropped = keep?.dropped;
  }

  /** Sessions that have a lane (busy, pinned or kept idle): for tests and diagnostics. */
  get laneCount(): number {
    return this.#lanes.size;
  }

  /** Runs `task` with the session's state after everything queued before it for the session, whatever their outcome. */
  run<T>(id: string, task: (state: S) => T | PromiseLike<T>): Promise<T> {
    return this.#runIn(this.#lanes.get(id) ?? this.#open(id), task);
  }

  /**
   * Queues `bodies` for `write`, joining the appends waiting for the session under the same lease.
   * The batch is written with the `options` of its first append; if that fails, every append of it
   * rejects with the error.
   */
  append(
    id: string,
    bodies: readonly string[],
    options: WriteOptions,
    write: (bodies: string[], options: WriteOptions, state: S) => Promise<void>,
  ): Promise<void> {
    const lane = this.#lanes.get(id) ?? this.#open(id);
    let batch = lane.batch;
    if (!batch || !sameLease(batch.lease, options.lease)) {
      const fresh = { lease: options.lease, bodies: [] as string[] } as AppendBatch;
      fresh.done = this.#runIn(lane, (state) => {
        if (lane.batch === fresh) lane.batch = undefined;
        return write(fresh.bodies, options, state);
      });
      lane.batch = fresh;
      batch = fresh;
    }
    batch.bodies.push(...bodies);
    return batch.done;
  }

  /** Settles when the session's queued work has. */
  idle(id: string): Promise<unknown> {
    return this.#lanes.get(id)?.tail ?? Promise.resolve();
  }

  /** Settles when every session's queued work has. */
  allIdle(): Promise<unknown> {
    return Promise.all([...this.#lanes.values()].map((lane) => lane.tail));
  }

  #runIn<T>(lane: Lane<S>, task: (state: S) => T | PromiseLike<T>): Promise<T> {
    // A lane going busy leaves the idle ones (those that may be dropped).
    if (lane.pending++ === 0 && lane.listed) this.#unlist(lane);
    // The tail resolves to the state, so the next task gets it as its argument.
    const result = lane.tail.then(task);
    lane.tail = result.then(lane.settled, lane.settled);
    return result;
  }

  #open(id: string): Lane<S> {
    const state = this.#state?.(id) as S;
    const lane: Lane<S> = {
      id,
      tail: Promise.resolve(state),
      batch: undefined,
      pending: 0,
      settled: () => {
        if (--lane.pending === 0) this.#rest(lane);
        return state;
      },
      state,
      listed: false,
      older: undefined,
      newer: undefined,
    };
    this.#lanes.set(id, lane);
    return lane;
  }

  /** A lane whose work is all done: dropped, kept, or kept as the most recently used idle one. */
  #rest(lane: Lane<S>): void {
    if (!this.#keepIdle) {
      this.#lanes.delete(lane.id);
      return;
    }
    if (this.#pinned?.(lane.state)) return;
    // It left the list when it went busy, so it goes in as the newest.
    const newest = this.#newestIdle;
    lane.older = newest;
    if (newest) newest.newer = lane;
    else this.#oldestIdle = lane;
    this.#newestIdle = lane;
    lane.listed = true;
    if (++this.#idleCount <= this.#maxIdle) return;
    const oldest = this.#oldestIdle as Lane<S>;
    this.#unlist(oldest);
    this.#lanes.delete(oldest.id);
    try {
      this.#dropped?.(oldest.state);
    } catch {
      // Runs in another lane's settle: a throw would fail that lane's next task. The lane is gone either way.
    }
  }

  /** Takes `lane` out of the list of idle lanes that may be dropped. */
  #unlist(lane: Lane<S>): void {
    const { older, newer } = lane;
    if (older) older.newer = newer;
    else this.#oldestIdle = newer;
    if (newer) newer.older = older;
    else this.#newestIdle = older;
    lane.older = undefined;
    lane.newer = undefined;
    lane.listed = false;
    this.#idleCount--;
  }
}

function sameLease(a: SessionLease | undefined, b: SessionLease | undefined): boolean {
  return a === b || (a?.owner === b?.owner && a?.token === b?.token);
}
