import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { postgresUrl } from './support/postgres.js';
import { restateServerBinary } from './support/restate-server.js';

beforeAll(async () => {
  await buildDist();
}, 120_000);

const binary = restateServerBinary();
if ('missing' in binary) console.warn(`restate chaos skipped: ${binary.missing}`);

/** A small chaos run on the engine (the full size is `npm run chaos:engines`): its JSON line of counts. */
async function chaos(engine: 'restate' | 'dbos', flags: string[] = []) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      path.join(repoRoot, 'test', 'chaos', 'run-engine-chaos.mjs'),
      `--engine=${engine}`,
      '--workers=3',
      '--sessions=6',
      '--kills=1',
      '--killMinMs=200',
      '--killMaxMs=600',
      // Tools long enough that a kill finds one running: with the runner's 5-40 ms tools six sessions
      // could all end between two looks of the kill loop, and the run had nothing to prove (kills 0).
      '--toolMinMs=150',
      '--toolMaxMs=400',
      '--timeoutMs=90000',
      `--url=${postgresUrl()}`,
      ...flags,
    ],
    { cwd: repoRoot, timeout: 120_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

/** What every chaos run must show, whatever the engine. */
const HELD = {
  completed: 6,
  recordedThenRunAgain: 0,
  nonIdempotentRunTwice: 0,
  inFlightNotUnknown: 0,
  approvalsDoubled: 0,
  approvalsLost: 0,
  transcriptGaps: 0,
  duplicateSeqs: 0,
  duplicateMessages: 0,
  unansweredCalls: 0,
  otherResults: [],
  resultsWithoutRun: [],
};

describe('chaos on the durable engines: worker processes SIGKILLed while tools run', () => {
  it.skipIf('missing' in binary)(
    'restate: every session completes; nothing recorded runs again; the session store has no gap',
    async () => {
      const result = await chaos('restate');
      expect(result).toMatchObject(HELD);
      expect(result.kills).toBe(1);
      expect(result.approvalsAccepted).toBe(6);
    },
    150_000,
  );

  it('dbos: every session completes; nothing recorded runs again; the session store has no gap', async () => {
    const result = await chaos('dbos');
    expect(result).toMatchObject(HELD);
    expect(result.kills).toBe(1);
    expect(result.approvalsAccepted).toBe(6);
  }, 150_000);

  it('a run where nothing moves stops at its stall window and names the stuck sessions', async () => {
    // Tools that take 10 minutes: the first batch starts, then nothing moves.
    const result = await chaos('dbos', [
      '--workers=1',
      '--sessions=2',
      '--kills=0',
      '--toolMinMs=600000',
      '--toolMaxMs=600000',
      '--stallMs=3000',
    ]);
    expect(result.stalled).toBe(true);
    expect(result.completed).toBe(0);
    expect(result.seconds).toBeLessThan(90);
    expect(result.stuck.map((s: { id: string }) => s.id).sort()).toEqual(['chaos-0', 'chaos-1']);
    expect(result.stuck[0].state).toBe('Thinking');
  }, 150_000);
});
