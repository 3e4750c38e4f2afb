// One chaos worker process on a durable engine (run-engine-chaos.mjs): the chaos agent served as a
// Restate endpoint (on an OS-chosen port, printed as `ready <port>`) or run as a DBOS worker (with
// the takeover of dead workers), its sessions kept in the PostgreSQL session store as well. The tools
// count their own runs as the built-in workers' chaos worker does. Killed with SIGKILL at random.
import { appendFileSync } from 'node:fs';
import http2 from 'node:http2';
import pg from 'pg';
import { z } from 'zod';
import { defineTool } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.url, max: 6 });
const store = new PostgresSessionStore({ pool }, { schema: config.schema });
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
      await pause(config.toolMinMs ?? 5, config.toolMaxMs ?? 40);
      count(name, ctx, 'end');
      return `${result} ${item}`;
    },
  });
const tools = [
  counted('lookup', { idempotent: true }, 'looked up'),
  counted('write_note', {}, 'wrote'),
  counted('charge', { needsApproval: true }, 'charged'),
];
const options = () => ({
  name: 'chaos',
  baseURL: config.baseURL,
  apiKey: 'chaos',
  tools,
  retry: { maxAttempts: 8 },
});

if (config.engine === 'restate') {
  process.env.RESTATE_LOGGING ??= 'ERROR';
  const restate = await import('@restatedev/restate-sdk');
  const { restateAgent } = await import('../../dist/engines/restate/index.js');
  const agent = restateAgent('chaos', options, { store });
  const server = http2.createServer(restate.endpoint().bind(agent).http2Handler());
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${server.address().port}\n`));
} else {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const { dbosAgent, dbosExecutorId, startDbosRecovery } = await import('../../dist/engines/dbos/index.js');
  const agent = dbosAgent('chaos', options, { pool, store, queuePollMs: 100 });
  const executorId = dbosExecutorId();
  DBOS.setConfig({
    name: 'agentloop-chaos',
    systemDatabaseUrl: config.url,
    executorID: executorId,
    logLevel: 'error',
  });
  await startDbosRecovery({ pool, queues: [agent.queue], leaseMs: config.leaseMs, executorId });
  await DBOS.launch();
  await agent.start();
  process.stdout.write('ready\n');
}
