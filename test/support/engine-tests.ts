import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.js';
import type { Scenario, ScriptedServer } from '../../src/testing/index.js';
import { repoRoot } from './build-dist.js';

// What the tests of the durable engines share (test/restate-*.test.ts, test/dbos-*.test.ts): the
// tools of the acceptance tests, the crash children's tools and the crash scenario both engines run,
// and a wait on a condition.

/**
 * The acceptance tests' tools, each pushing a line to `runs` when it runs: `lookup` (idempotent)
 * and `refund` (asks for approval first).
 */
export function engineTestTools(runs: string[]) {
  const lookup = defineTool({
    name: 'lookup',
    description: 'reads a value',
    parameters: z.object({ key: z.string() }),
    idempotent: true,
    execute: async ({ key }) => {
      runs.push(`lookup ${key}`);
      return `value of ${key}`;
    },
  });
  const refund = defineTool({
    name: 'refund',
    description: 'refunds an order (asks first)',
    parameters: z.object({ order: z.string() }),
    needsApproval: true,
    execute: async ({ order }) => {
      runs.push(`refund ${order}`);
      return `refunded ${order}`;
    },
  });
  return { lookup, refund };
}

/** The URL of a module of dist/ (as users import agentloop's subpaths), for a child's imports. */
export function distModule(...parts: string[]): string {
  return JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', ...parts)).href);
}

/**
 * The source of the crash children's tools (a module body; needs `config.log`, `config.chargeMs`,
 * `config.lookupMs`): `charge` (not idempotent, takes `chargeMs`) and `lookup` (idempotent, takes
 * `lookupMs`), each appending `<tool> <arg> <pid>` to the shared log file when it starts.
 */
export const CRASH_TOOLS = `
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool } from ${distModule('index.js')};

const log = (line) => appendFileSync(config.log, line + ' ' + process.pid + '\\n');
const charge = defineTool({
  name: 'charge',
  description: 'charges a card',
  parameters: z.object({ cents: z.number() }),
  execute: async ({ cents }) => {
    log('charge ' + cents);
    await new Promise((r) => setTimeout(r, config.chargeMs));
    return 'charged ' + cents;
  },
});
const lookup = defineTool({
  name: 'lookup',
  description: 'reads a value',
  parameters: z.object({ key: z.string() }),
  idempotent: true,
  execute: async ({ key }) => {
    log('lookup ' + key);
    await new Promise((r) => setTimeout(r, config.lookupMs));
    return 'value of ' + key;
  },
});
`;

/** Polls `probe` every 50 ms until it gives a value; throws after `ms`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The turn both engines' crash tests cut (the children's {@link CRASH_TOOLS}): the model calls
 * `charge` (500 cents, not idempotent) and `lookup` (`order`, idempotent) at once, then answers.
 */
export const crashTurn = {
  /** What the model answers once both calls are answered. */
  answer: 'checked: the charge may not have gone through',
  scenario(): Scenario {
    return {
      turns: [
        {
          toolCalls: [
            { name: 'charge', arguments: { cents: 500 } },
            { name: 'lookup', arguments: { key: 'order' } },
          ],
        },
        { content: crashTurn.answer },
      ],
    };
  },

  /** Resolves once both tools have started (their lines are in the tools' `log`). */
  started(log: string): Promise<true> {
    return eventually(async () => {
      const lines = await readFile(log, 'utf8').catch(() => '');
      return lines.includes('charge 500') && lines.includes('lookup order') ? true : undefined;
    });
  },

  /**
   * Checks what the turn left once another process finished it: the charge ran once (in the killed
   * process) and the lookup again in the new one; the model was told the charge's outcome is unknown
   * and the lookup's value, and was asked once per iteration (the first reply came from the recorded
   * step in the replay).
   */
  async expectTakenOver(log: string, model: ScriptedServer): Promise<void> {
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines.filter((l) => l.startsWith('charge'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('lookup'))).toHaveLength(2);
    const tools = model.requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(String(tools[0]!.content)).toMatch(/^Outcome unknown: tool call "charge"/);
    expect(tools[1]!.content).toBe('value of order');
    expect(model.requests).toHaveLength(2);
  },
};
