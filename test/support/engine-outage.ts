import { z } from 'zod';
import { defineTool } from '../../src/index.js';
import { runCli } from './cli-process.js';
import { deferred } from './harness.js';

// What the tests of an engine gone under a running turn share (dbos-unreachable, restate-unreachable).

/**
 * The tool `charge` (not idempotent): each run is noted in `runs`, `charging` resolves when one
 * starts, and it answers `charged <cents>` once the test resolves `release`.
 */
export function heldCharge() {
  const runs: string[] = [];
  const charging = deferred();
  const release = deferred();
  const execute = async ({ cents }: { cents: number }) => {
    runs.push(`charge ${cents}`);
    charging.resolve();
    await release.promise;
    return `charged ${cents}`;
  };
  const parameters = z.object({ cents: z.number() });
  const tool = defineTool({
    name: 'charge',
    description: 'charges a card (not idempotent)',
    parameters,
    execute,
  });
  return { tool, runs, charging, release };
}

/**
 * `agentloop send --wait` (no input, 60 s) for the session `gone-1` of the agent `pay` on an engine,
 * `where` the flags that name the engine's address: a client waiting for the turn. Each call runs it.
 */
export function cliWait(engine: 'dbos' | 'restate', where: string[]) {
  const args = ['send', '--engine', engine, ...where, '--agent', 'pay', '--session', 'gone-1'];
  return () => runCli([...args, '--wait', '--timeout', '60'], { timeoutMs: 90_000 });
}
