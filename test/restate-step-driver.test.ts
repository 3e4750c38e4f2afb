import * as restate from '@restatedev/restate-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The package's entry provides Promise.withResolvers on Node 20 (SDK 1.17 calls it).
import '../src/engines/restate/index.js';
import { quiesce, RestateStepDriver } from '../src/engines/restate/restate-steps.js';
import {
  type RestateServer,
  registeredEndpoint,
  restateBinaryFor,
  startRestateServer,
} from './support/restate-server.js';

// The step driver on a real restate-server (docs/engines.md, "One await at a time"): a batch of five
// steps asked for at once is awaited in one wait (one `RestatePromise.all`), and each asker is settled
// as its step ends, in the order the outcomes came, not when the last ends; a replay of the attempt
// (Restate retries it from the journal) settles them in that same order: the SDK's VM yields after
// each mapped step that completes, and hands a replay its journal's outcomes one at a time, in the
// order they were recorded. The machine therefore sees the same outcomes in the same order in every
// attempt, which is what keeps the commands it asks for in the same order.

const binary = restateBinaryFor('WARN');

/**
 * Per session, each attempt's waits (calls of `next()`), the order its askers were settled in, and
 * what happened in order: `end <i>` when a step's closure ended (first attempt only), `got <i>` when
 * its asker was settled.
 */
const attempts = new Map<string, { rounds: number; order: string[]; log: string[] }[]>();

const batch = restate.object({
  name: 'batch',
  handlers: {
    send: async (ctx: restate.ObjectContext): Promise<string[]> => {
      const seen = { rounds: 0, order: [] as string[], log: [] as string[] };
      const list = attempts.get(ctx.key) ?? [];
      list.push(seen);
      attempts.set(ctx.key, list);
      const driver = new RestateStepDriver(ctx);
      let done = false;
      // Step i ends (4 - i) * 80 ms after it starts: they end in the reverse of the order they were asked in.
      const calls = [0, 1, 2, 3, 4].map((i) =>
        driver
          .step(`call_${i}`, async () => {
            await new Promise<void>((resolve) => setTimeout(resolve, (4 - i) * 80));
            seen.log.push(`end ${i}`);
            return `r${i}`;
          })
          .then((value) => {
            seen.order.push(value);
            seen.log.push(`got ${i}`);
          }),
      );
      void Promise.all(calls).then(() => {
        done = true;
      });
      for (;;) {
        await quiesce();
        if (done) break;
        seen.rounds++;
        await driver.next();
      }
      // The first attempt fails once its five steps are recorded: Restate retries it from the journal.
      if (list.length === 1) throw new Error('fail the first attempt after its steps');
      return [...seen.order].sort();
    },
  },
});

/** Resolves with the event-loop turns that passed before `promise` settled (at most 5). */
async function turnsUntil(promise: Promise<void>): Promise<number> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  for (let turns = 0; turns < 5; turns++) {
    await Promise.resolve();
    await Promise.resolve();
    if (settled) return turns;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return 5;
}

/**
 * Per session, each wait's outcome and the event-loop turns `settled()` waited after it: a batch of
 * three calls asked in one go (`batch`); or (`apart`) a slow step beside a short sleep, the sleep's
 * end asking for a quick step, and the quick one's end for a third, each asked while the slow one (of
 * an earlier round) still runs.
 */
const looks = new Map<string, { settled: string[]; turns: number[] }>();

const looking = restate.object({
  name: 'looking',
  handlers: {
    send: async (ctx: restate.ObjectContext, shape: 'batch' | 'apart') => {
      const seen = { settled: [] as string[], turns: [] as number[] };
      looks.set(ctx.key, seen);
      const driver = new RestateStepDriver(ctx);
      const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
      const steps: Promise<unknown>[] = [];
      const got = (name: string) => () => {
        seen.settled.push(name);
      };
      if (shape === 'batch') {
        for (const i of [0, 1, 2])
          steps.push(driver.step(`call_${i}`, () => pause(20 * i)).then(got(`call_${i}`)));
      } else {
        steps.push(driver.step('slow', () => pause(600)).then(got('slow')));
        // Each asker's reaction asks for one more (as a compaction's end asks for a model call).
        const third = () => steps.push(driver.step('third', async () => 'third').then(got('third')));
        const quick = () =>
          steps.push(
            driver
              .step('quick', async () => 'quick')
              .then(got('quick'))
              .then(third),
          );
        steps.push(driver.wait(ctx.sleep(1)).then(got('sleep')).then(quick));
      }
      await driver.settled();
      while (!driver.idle) {
        await driver.next();
        seen.turns.push(await turnsUntil(driver.settled()));
      }
      // `steps` grows while the loop runs: everything in it has settled by now.
      await Promise.all(steps);
      return seen;
    },
  },
});

describe.skipIf('missing' in binary)('the Restate step driver', () => {
  let server: RestateServer;
  let endpoint: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    server = await startRestateServer();
    endpoint = await registeredEndpoint(server, batch, looking);
  }, 60_000);

  afterAll(async () => {
    await endpoint?.close();
    await server?.stop();
  });

  it('settles each call of a batch as it ends, in one wait, and a replay in that same order', async () => {
    const response = await fetch(`${server.ingress}/batch/replayed/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'null',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    const [first, replay] = attempts.get('replayed') ?? [];
    expect(first?.rounds).toBe(1);
    expect(first?.order).toEqual(['r4', 'r3', 'r2', 'r1', 'r0']);
    // The first call to end was handed over before the last call's closure ended, not with it.
    const log = first?.log ?? [];
    expect(log.indexOf('got 4')).toBeGreaterThan(-1);
    expect(log.indexOf('got 4')).toBeLessThan(log.indexOf('end 0'));
    expect(replay?.rounds).toBe(1);
    expect(replay?.order).toEqual(first?.order);
  }, 60_000);

  it('waits once for a batch, and races steps asked in reaction beside an older one', async () => {
    const call = (key: string, shape: string) =>
      fetch(`${server.ingress}/looking/${key}/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(shape),
      }).then((response) => response.json());
    // One wait for the three calls; the machine asked for nothing after it: two turns.
    expect(await call('batch', 'batch')).toEqual({ settled: ['call_0', 'call_1', 'call_2'], turns: [2] });
    // Each step asked beside the slow one (of an earlier round) joins the next wait and is settled
    // before the slow one ends; a wait each, and a microtask after each reaction asked for a step.
    const apart = await call('apart', 'apart');
    expect(apart.settled).toEqual(['sleep', 'quick', 'third', 'slow']);
    expect(apart.turns).toHaveLength(4);
  }, 60_000);
});

// The turn loop's wait for the machine (rsplit36): it looks again as soon as the machine asked for a
// step or the turn ended, and lets two event-loop turns pass only when the machine asked for nothing.
describe('the Restate step driver: settled()', () => {
  /** A Restate promise that never settles (`settled()` never touches it; `next()` maps it and waits). */
  const unawaited = {
    map: () => new Promise(() => {}),
  } as unknown as restate.RestatePromise<unknown>;
  const ctx = {} as restate.ObjectContext;

  it('looks again at once when the machine asked for a step', async () => {
    const driver = new RestateStepDriver(ctx);
    void driver.wait(unawaited);
    expect(await turnsUntil(driver.settled())).toBe(0);
  });

  it('waits two turns of the event loop when nothing was asked, and no longer', async () => {
    const driver = new RestateStepDriver(ctx);
    expect(await turnsUntil(driver.settled())).toBe(2);
  });

  it('ends that wait when the machine asks for a step during it, or its turn ends', async () => {
    const asked = new RestateStepDriver(ctx);
    const waiting = asked.settled();
    void asked.wait(unawaited);
    expect(await turnsUntil(waiting)).toBe(0);
    const ended = new RestateStepDriver(ctx);
    const resting = ended.settled();
    ended.wake();
    expect(await turnsUntil(resting)).toBe(0);
  });

  it('does not count what the last wait already held (an awakeable made before it)', async () => {
    const driver = new RestateStepDriver(ctx);
    void driver.wait(unawaited);
    await driver.settled();
    // `next()` takes everything asked so far into its wait; the machine's reaction to its outcome comes after.
    void driver.next();
    expect(await turnsUntil(driver.settled())).toBe(2);
  });
});
