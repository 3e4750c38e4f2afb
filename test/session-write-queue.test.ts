/**
 * The per-session write queue both stores use (src/session/session-write-queue.ts): call order, reads
 * waiting for earlier writes, appends batched only under the same lease, a failed write rejecting its
 * whole batch without holding up what follows, and lanes dropped or kept when idle. The store
 * conformance suites check the same through the stores; these pin each rule on its own.
 */
import { describe, expect, it } from 'vitest';
import type { SessionLease, WriteOptions } from '../src/session/session-lease.js';
import { SessionWriteQueue } from '../src/session/session-write-queue.js';

/** A promise and the functions that settle it (support/harness.ts has one too, behind heavy imports). */
function deferred<T = void>() {
  const settle = {} as { resolve: (value: T) => void; reject: (error: unknown) => void };
  const promise = new Promise<T>((resolve, reject) => Object.assign(settle, { resolve, reject }));
  return { promise, ...settle };
}

/** Lets every queued promise callback run (setImmediate comes after the microtask queue is empty). */
const drained = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether `promise` has settled, after the queued callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await drained();
  return done;
}

const lease = (owner: string, token: number): SessionLease => ({
  sessionId: 's1',
  owner,
  pid: 1,
  host: 'h',
  token,
  expiresAt: 0,
});

/** A queue whose append writes are recorded, each held until the test settles it. */
function recordingQueue() {
  const queue = new SessionWriteQueue();
  const writes: { bodies: string[]; options: WriteOptions; done: ReturnType<typeof deferred<void>> }[] = [];
  const write = (bodies: string[], options: WriteOptions) => {
    const done = deferred();
    writes.push({ bodies: [...bodies], options, done });
    return done.promise;
  };
  const append = (bodies: string[], options: WriteOptions = {}) => queue.append('s1', bodies, options, write);
  return { queue, writes, append };
}

describe('SessionWriteQueue: order', () => {
  it('runs a session’s tasks one at a time in call order, other sessions beside them', async () => {
    const queue = new SessionWriteQueue();
    const log: string[] = [];
    const first = deferred();
    const a = queue.run('s1', async () => {
      log.push('a start');
      await first.promise;
      log.push('a end');
      return 'a';
    });
    const b = queue.run('s1', () => {
      log.push('b');
      return 'b';
    });
    const other = queue.run('s2', () => {
      log.push('other');
      return 'other';
    });
    await drained();
    expect(log).toEqual(['a start', 'other']);
    expect(await other).toBe('other');
    first.resolve();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(log).toEqual(['a start', 'other', 'a end', 'b']);
  });

  it('runs the next task after a failed one, and the failure reaches only its caller', async () => {
    const queue = new SessionWriteQueue();
    const boom = new Error('disk full');
    const failed = queue.run('s1', async () => {
      throw boom;
    });
    const next = queue.run('s1', () => 'ran');
    await expect(failed).rejects.toBe(boom);
    expect(await next).toBe('ran');
  });
});

describe('SessionWriteQueue: reads wait for earlier writes', () => {
  it('idle(id) settles only when the session’s queued work has, and not on another session’s', async () => {
    const queue = new SessionWriteQueue();
    const first = deferred();
    const second = deferred();
    void queue.run('s1', () => first.promise);
    void queue.run('s1', () => second.promise).catch(() => {});
    const busy = deferred();
    void queue.run('s2', () => busy.promise);
    const idle = queue.idle('s1');
    expect(await settled(idle)).toBe(false);
    first.resolve();
    expect(await settled(idle)).toBe(false);
    second.reject(new Error('a failed write is done too'));
    expect(await settled(idle)).toBe(true);
    expect(await settled(queue.idle('unknown'))).toBe(true);
    busy.resolve();
  });

  it('allIdle() settles when every session’s queued work has', async () => {
    const queue = new SessionWriteQueue();
    const one = deferred();
    const two = deferred();
    void queue.run('s1', () => one.promise);
    void queue.run('s2', () => two.promise);
    const all = queue.allIdle();
    one.resolve();
    expect(await settled(all)).toBe(false);
    two.resolve();
    expect(await settled(all)).toBe(true);
  });
});

describe('SessionWriteQueue: appends', () => {
  it('writes the appends that wait behind a busy session together, under the same lease only', async () => {
    const { queue, writes, append } = recordingQueue();
    const busy = deferred();
    void queue.run('s1', () => busy.promise);
    const first = { lease: lease('w1', 3) };
    const sameLeaseAgain = { lease: lease('w1', 3) }; // another object, the same owner and token
    const appends = [
      append(['a'], first),
      append(['b', 'c'], sameLeaseAgain),
      append(['d'], { lease: lease('w1', 4) }), // a newer token: a write of its own
      append(['e'], { lease: lease('w2', 4) }), // another owner: a write of its own
      append(['f']), // no lease: a write of its own
      append(['g']),
    ];
    busy.resolve();
    await drained();
    // One write at a time: the second waits for the first.
    expect(writes.map((w) => w.bodies)).toEqual([['a', 'b', 'c']]);
    expect(writes[0]!.options).toBe(first); // the batch goes out with its first append's options
    for (let i = 0; i < 4; i++) {
      writes[i]!.done.resolve();
      await drained();
    }
    await Promise.all(appends);
    expect(writes.map((w) => w.bodies)).toEqual([['a', 'b', 'c'], ['d'], ['e'], ['f', 'g']]);
  });

  it('starts a new write for appends given once a batch’s write has begun', async () => {
    const { writes, append } = recordingQueue();
    const first = append(['a']);
    await drained();
    const second = append(['b']);
    const third = append(['c']);
    await drained();
    expect(writes.map((w) => w.bodies)).toEqual([['a']]);
    writes[0]!.done.resolve();
    await drained();
    expect(writes.map((w) => w.bodies)).toEqual([['a'], ['b', 'c']]);
    writes[1]!.done.resolve();
    await Promise.all([first, second, third]);
  });

  it('rejects every append of a batch whose write fails, and writes the next batch', async () => {
    const { queue, writes, append } = recordingQueue();
    const busy = deferred();
    void queue.run('s1', () => busy.promise);
    const batch = [append(['a']), append(['b']), append(['c'])];
    busy.resolve();
    await drained();
    const later = append(['d']);
    const boom = new Error('stale lease');
    writes[0]!.done.reject(boom);
    const outcomes = await Promise.allSettled(batch);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: boom },
      { status: 'rejected', reason: boom },
      { status: 'rejected', reason: boom },
    ]);
    await drained();
    expect(writes.map((w) => w.bodies)).toEqual([['a', 'b', 'c'], ['d']]);
    writes[1]!.done.resolve();
    await expect(later).resolves.toBeUndefined();
  });
});

describe('SessionWriteQueue: state and idle lanes', () => {
  it('gives every task its session’s state, made when the lane opens', async () => {
    const made: string[] = [];
    const queue = new SessionWriteQueue({ state: (id) => ({ id, n: made.push(id) }) });
    const busy = deferred();
    const first = queue.run('s1', async (state) => {
      await busy.promise;
      return state;
    });
    const second = queue.run('s1', (state) => state);
    const other = queue.run('s2', (state) => state);
    const written: unknown[] = [];
    const appended = queue.append('s1', ['x'], {}, async (_bodies, _options, state) => {
      written.push(state);
    });
    busy.resolve();
    const [a, b, c] = await Promise.all([first, second, other, appended]);
    expect(a).toEqual({ id: 's1', n: 1 });
    expect(b).toBe(a);
    expect(written).toEqual([a]);
    expect(c).toEqual({ id: 's2', n: 2 });
    expect(made).toEqual(['s1', 's2']);
  });

  it('drops a lane once its work is done (fresh state next time), not while work or a batch waits', async () => {
    let made = 0;
    const queue = new SessionWriteQueue({ state: () => ++made });
    const busy = deferred();
    const first = queue.run('s1', async (state) => {
      await busy.promise;
      return state;
    });
    const held = deferred();
    const waiting = queue.append('s1', ['x'], {}, () => held.promise);
    busy.resolve();
    expect(await first).toBe(1);
    await drained();
    // The batch was queued when the first task ended, and its write runs: the same lane and state.
    const during = queue.run('s1', (state) => state);
    held.resolve();
    await waiting;
    expect(await during).toBe(1);
    await drained();
    expect(await queue.run('s1', (state) => state)).toBe(2);
    expect(await queue.run('s1', (state) => state)).toBe(3);
  });

  it('keeps idle lanes and their state with keepIdleLanes', async () => {
    let made = 0;
    const queue = new SessionWriteQueue({
      state: () => ({ n: ++made }),
      keepIdleLanes: { max: Number.POSITIVE_INFINITY },
    });
    const first = await queue.run('s1', (state) => state);
    await drained();
    const failed = queue.run('s1', () => Promise.reject(new Error('x')));
    await expect(failed).rejects.toThrow('x');
    await drained();
    expect(await queue.run('s1', (state) => state)).toBe(first);
    expect(made).toBe(1);
  });

  it('with a bound, keeps the idle lanes used last and drops the one used longest ago, telling why', async () => {
    const dropped: string[] = [];
    const queue = new SessionWriteQueue({
      state: (id) => ({ id }),
      keepIdleLanes: { max: 2, dropped: (state) => dropped.push(state.id) },
    });
    const first = await queue.run('a', (state) => state);
    await queue.run('b', () => {});
    await queue.run('a', () => {}); // a is now the one used last
    await queue.run('c', () => {});
    await drained();
    expect(dropped).toEqual(['b']);
    expect(queue.laneCount).toBe(2);
    expect(await queue.run('a', (state) => state)).toBe(first);
    await queue.run('b', () => {}); // made again: c is the one used longest ago now
    await drained();
    expect(dropped).toEqual(['b', 'c']);
    expect(queue.laneCount).toBe(2);
  });

  it('a dropped callback that throws does not fail the task of the lane whose rest dropped it', async () => {
    const queue = new SessionWriteQueue({
      keepIdleLanes: {
        max: 1,
        dropped: () => {
          throw new Error('close failed');
        },
      },
    });
    await queue.run('a', () => {});
    await queue.run('b', () => {}); // drops a
    await expect(queue.run('b', () => 'next')).resolves.toBe('next');
    expect(queue.laneCount).toBe(1);
  });

  it('with a bound, never drops a lane with work queued or a batch being written, nor a pinned one', async () => {
    const dropped: string[] = [];
    const pins = new Set(['pinned']);
    let made = 0;
    const queue = new SessionWriteQueue({
      state: (id) => ({ id, n: ++made }),
      keepIdleLanes: {
        max: 2,
        pinned: (state) => pins.has(state.id),
        dropped: (state) => dropped.push(state.id),
      },
    });
    // Both idle first (the two kept), then busy: they leave the idle lanes that may be dropped.
    await queue.run('busy', () => {});
    await queue.run('batch', () => {});
    const busy = deferred();
    const running = queue.run('busy', async (state) => {
      await busy.promise;
      return state;
    });
    const writing = deferred();
    const batch = queue.append('batch', ['x'], {}, () => writing.promise);
    const pinned = await queue.run('pinned', (state) => state);
    for (const id of ['i1', 'i2', 'i3']) await queue.run(id, () => {});
    await drained();
    expect(dropped).toEqual(['i1']);
    expect(queue.laneCount).toBe(5);
    const joined = queue.append('batch', ['y'], {}, () => Promise.resolve());
    busy.resolve();
    writing.resolve();
    await Promise.all([batch, joined]);
    expect(await running).toEqual({ id: 'busy', n: 1 });
    await drained();
    // Idle again, they push out the two used longest ago; the pinned lane stays.
    expect(dropped).toEqual(['i1', 'i2', 'i3']);
    expect(await queue.run('pinned', (s) => s)).toBe(pinned);
    // Unpinned, it is dropped like any idle lane once others are used after it.
    pins.delete('pinned');
    await queue.run('pinned', () => {});
    await queue.run('i4', () => {});
    await queue.run('i5', () => {});
    await drained();
    expect(dropped).toEqual(['i1', 'i2', 'i3', 'busy', 'batch', 'pinned']);
    expect(queue.laneCount).toBe(2);
  });
});
