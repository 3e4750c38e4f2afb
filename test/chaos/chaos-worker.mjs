// One chaos worker process: startWorker on the shared database with tools that count their own runs
// (a line per start and end, appended to one file shared by every process). Killed with SIGKILL at
// random moments by run-chaos.mjs.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, startWorker } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';

const config = JSON.parse(process.argv[2]);
const store = new PostgresSessionStore({ connectionString: config.url, max: 6 }, { schema: config.schema });
const count = (tool, ctx, phase) =>
  appendFileSync(
    config.counter,
    `${JSON.stringify({ tool, key: ctx.idempotencyKey, session: ctx.sessionId, phase, t: Date.now(), pid: process.pid })}\n`,
  );
const pause = (min, max) => new Promise((r) => setTimeout(r, min + Math.random() * (max - min)));
const counted = (name, flags, result) =>
  defineTool({
    name,
    description: name,
    parameters: z.object({ item: z.string() }),
    ...flags,
    execute: async ({ item }, ctx) => {
      count(name, ctx, 'start');
      await pause(5, 40);
      count(name, ctx, 'end');
      return `${result} ${item}`;
    },
  });
const tools = [
  counted('lookup', { idempotent: true }, 'looked up'),
  counted('write_note', {}, 'wrote'),
  counted('charge', { needsApproval: true }, 'charged'),
];
const worker = startWorker({
  store,
  concurrency: config.concurrency,
  leaseMs: config.leaseMs,
  pollMs: 100,
  agent: () => ({ baseURL: config.baseURL, apiKey: 'chaos', tools, retry: { maxAttempts: 8 } }),
  onError: (error, id) =>
    process.stderr.write(`worker ${process.pid} session ${id}: ${error?.message ?? error}\n`),
});
process.on('SIGTERM', () => {
  void worker
    .stop()
    .then(() => store.close())
    .then(() => process.exit(0));
});
process.stdout.write('ready\n');
