// What every chaos run shares (run-chaos.mjs on the built-in workers, run-engine-chaos.mjs on a durable
// engine): the scripted model's conversation and the tools that count their own runs. Each session is
// a turn of a 3-call batch (two idempotent lookups, a note), then a charge that asks for approval with
// a note beside it, then an answer.
import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../dist/index.js';
import { startScriptedServer } from '../../dist/testing/index.js';
import { startPostgresCluster } from '../support/postgres-cluster.mjs';

/**
 * A run's start: its `--name=value` flags, the counts every run takes (`--workers`, `--sessions`,
 * `--timeoutMs`, `--killMinMs`, `--killMaxMs`; `defaults` for the first two), and PostgreSQL: `--url`,
 * or a throwaway cluster started here (`cluster`, to stop at the end).
 */
export async function startChaosRun(defaults) {
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
  const started = Date.now();
  const cluster = args.url ? undefined : await startPostgresCluster({ durable: false });
  return {
    args,
    started,
    cluster,
    url: args.url ?? cluster.url,
    workers: Number(args.workers ?? defaults.workers),
    sessions: Number(args.sessions ?? defaults.sessions),
    timeoutMs: Number(args.timeoutMs ?? 600_000),
    killMinMs: Number(args.killMinMs ?? 700),
    killMaxMs: Number(args.killMaxMs ?? 2_000),
  };
}

/** The scripted model every session of a chaos run talks to. */
export function startChaosModel() {
  return startScriptedServer({
    latencyMs: 10,
    record: false,
    scenario: {
      turns: [
        {
          toolCalls: [
            { name: 'lookup', arguments: { item: 'order' } },
            { name: 'write_note', arguments: { item: 'note' } },
            { name: 'lookup', arguments: { item: 'customer' } },
          ],
        },
        {
          toolCalls: [
            { name: 'charge', arguments: { item: 'card' } },
            { name: 'write_note', arguments: { item: 'receipt' } },
          ],
        },
        { content: 'All done.' },
      ],
    },
  });
}

/**
 * The chaos tools, each appending a line per start and end to `counter` (one file shared by every
 * process: `{ tool, key, session, phase, t, pid }`) and taking `toolMinMs`-`toolMaxMs` (default 5-40).
 */
export function chaosTools({ counter, toolMinMs = 5, toolMaxMs = 40 }) {
  const count = (tool, ctx, phase) =>
    appendFileSync(
      counter,
      `${JSON.stringify({ tool, key: ctx.idempotencyKey, session: ctx.sessionId, phase, t: Date.now(), pid: process.pid })}\n`,
    );
  const pause = () => new Promise((r) => setTimeout(r, toolMinMs + Math.random() * (toolMaxMs - toolMinMs)));
  const counted = (name, flags, result) =>
    defineTool({
      name,
      description: name,
      parameters: z.object({ item: z.string() }),
      ...flags,
      execute: async ({ item }, ctx) => {
        count(name, ctx, 'start');
        await pause();
        count(name, ctx, 'end');
        return `${result} ${item}`;
      },
    });
  return [
    counted('lookup', { idempotent: true }, 'looked up'),
    counted('write_note', {}, 'wrote'),
    counted('charge', { needsApproval: true }, 'charged'),
  ];
}

/** The JSON lines of a file written so far (the tools' runs, the answers given); none when it is missing. */
export async function readJsonLines(file) {
  return (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/**
 * The tools' runs by call (`<session>:<call id>`): each call's starts in order, the calls that ended,
 * and the reruns counted (`idempotentReruns`: lookups run again; `nonIdempotentRunTwice`: other calls
 * started more than once).
 */
export function runsByCall(runs) {
  const starts = new Map();
  const ended = new Set();
  for (const r of runs) {
    if (r.phase === 'end') ended.add(r.key);
    else starts.set(r.key, [...(starts.get(r.key) ?? []), r]);
  }
  let idempotentReruns = 0;
  let nonIdempotentRunTwice = 0;
  for (const list of starts.values()) {
    if (list.length < 2) continue;
    if (list[0].tool === 'lookup') idempotentReruns += list.length - 1;
    else nonIdempotentRunTwice++;
  }
  return { starts, ended, idempotentReruns, nonIdempotentRunTwice };
}
