import { describe, expect, it } from 'vitest';
import { RunningSessions, type RunningTurn } from '../src/server/mcp/running-sessions.js';

describe('RunningSessions (one ask_ turn a session)', () => {
  it('claims a free session at once, with no promise to wait for', () => {
    const running = new RunningSessions();
    const turn = running.claim('s1');
    expect(turn).toBeDefined();
    expect(turn).not.toBeInstanceOf(Promise);
    // Another session is free too; the same one is busy while its turn runs.
    expect(running.claim('s2')).not.toBeInstanceOf(Promise);
    expect(running.claim('s1')).toBeUndefined();
  });

  it('a call on a cancelled turn waits for it to rest, then claims the session', async () => {
    const running = new RunningSessions();
    const first = running.claim('s') as RunningTurn;
    first.cancelled();
    const waiting = running.claim('s');
    expect(waiting).toBeInstanceOf(Promise);
    let next: RunningTurn | undefined;
    void (waiting as Promise<RunningTurn | undefined>).then((turn) => {
      next = turn;
    });
    await Promise.resolve();
    expect(next).toBeUndefined(); // still waiting: the first turn has not rested
    first.release();
    await waiting;
    expect(next).toBeDefined();
    expect(running.claim('s')).toBeUndefined(); // the waiting call's turn runs now
    first.release(); // a second release of a turn that rested changes nothing
    expect(running.claim('s')).toBeUndefined();
    next!.release();
    expect(running.claim('s')).not.toBeInstanceOf(Promise);
  });

  it('idle resolves once every turn rested, and at once when none runs', async () => {
    const running = new RunningSessions();
    await running.idle();
    const a = running.claim('a') as RunningTurn;
    const b = running.claim('b') as RunningTurn;
    let idle = false;
    const waiting = running.idle().then(() => {
      idle = true;
    });
    a.release();
    await Promise.resolve();
    expect(idle).toBe(false);
    b.release();
    await waiting;
    expect(idle).toBe(true);
    // Waiters are told once: a later turn's end does not call them again, and a new wait works.
    const c = running.claim('c') as RunningTurn;
    const again = running.idle();
    c.release();
    await again;
  });
});
