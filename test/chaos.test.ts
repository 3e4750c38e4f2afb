import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { postgresUrl } from './support/postgres.js';

beforeAll(async () => {
  await buildDist();
}, 120_000);

describe('chaos: worker processes on one PostgreSQL, SIGKILLed at random moments', () => {
  // The full size (4 workers x 200 sessions) is `npm run chaos`; the suite runs a smaller one.
  it('every session completes; no recorded call runs again, no approval is lost or doubled, no transcript gap', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(repoRoot, 'test', 'chaos', 'run-chaos.mjs'),
        '--workers=3',
        '--sessions=30',
        // Kills count from when every worker is up, so a loaded machine slows the run down but does
        // not starve it (run-chaos.mjs). A stuck run stops after 60 s with nothing moving; the cap
        // is for a machine slowed down a lot (the run took 17 s at load 10, 168 s at load 28).
        '--timeoutMs=240000',
        '--stallMs=60000',
        '--killMinMs=800',
        '--killMaxMs=2000',
        `--url=${postgresUrl()}`,
      ],
      { cwd: repoRoot, timeout: 270_000 },
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(result).toMatchObject({
      completed: 30,
      stalled: false,
      recordedThenRunAgain: 0,
      nonIdempotentRunTwice: 0,
      approvalsDoubled: 0,
      approvalsLost: 0,
      transcriptGaps: 0,
      duplicateSeqs: 0,
      unansweredCalls: 0,
      // A call answered with a tool's own result was run (no result made up for a call cut off).
      resultsWithoutRun: [],
    });
    // The run did what it says: workers were killed, tools ran, each approval was accepted once.
    expect(result.kills).toBeGreaterThan(0);
    // Tools ran (a kill between a call's intent and its start answers it "outcome unknown" or "not
    // run" instead, so there may be fewer runs than the 150 calls).
    expect(result.toolRuns).toBeGreaterThan(0);
    // One accepted answer per approval asked (a crash before a WaitingApproval save answers the call "not run" instead).
    expect(result.approvalsAccepted).toBeGreaterThan(0);
    expect(result.approvalsAccepted).toBeLessThanOrEqual(30);
  }, 300_000);
});
