// Durable engines (issue 36): what a session costs when its turn runs on Restate or DBOS, next to the
// same agent in process. The bench task's shape, smaller: one turn of 5 model turns that each ask for
// one tool call (`lookup`, from memory), then a final answer: 6 model calls and 5 tool calls a session.
// Modes, each `sessions` sessions one after another (medians of `repeat` runs after a warm-up):
//   in-process   createAgent, no engine
//   seam         the same agent with an in-memory DurableSteps (a Map): the adapter's own cost
//   restate      restateAgent on restate-server 1.7 (the dev dependency's binary, a temp data dir),
//                the endpoint in this process, sessions sent through the ingress (send waits)
//   dbos         dbosAgent on DBOS 5 on a throwaway PostgreSQL cluster (fsync on), one process, the
//                queue polled every `dbos-poll-ms` (default 50; DBOS's own default is 1 s)
// The model server (startScriptedServer) runs in this process too: every mode pays it alike.
// npm run build && node bench/engines.mjs [--sessions=20] [--repeat=3] [--dbos-poll-ms=50] [--only=in-process,seam,restate,dbos]
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { createAgent, defineTool } from '../dist/index.js';
import { startScriptedServer } from '../dist/testing/index.js';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const sessions = Number(args.sessions ?? 20);
const repeat = Number(args.repeat ?? 3);
const only = new Set((args.only ?? 'in-process,seam,restate,dbos').split(','));
const TOOL_TURNS = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const lookup = defineTool({
  name: 'lookup',
  description: 'reads a value',
  parameters: z.object({ key: z.string() }),
  idempotent: true,
  execute: async ({ key }) => `value of ${key} `.repeat(40),
});
const scenario = {
  turns: [
    ...Array.from({ length: TOOL_TURNS }, (_, i) => ({
      toolCalls: [{ name: 'lookup', arguments: { key: `k${i}` } }],
    })),
    { content: 'All values looked up.' },
  ],
};
const model = await startScriptedServer({ scenario });
const agentOptions = () => ({ baseURL: model.url, apiKey: 'bench', tools: [lookup], contextWindow: false });

/** Runs `runSession(i)` for `sessions` sessions, `repeat` times after a warm-up; ms per session (median). */
async function measure(name, runSession) {
  let n = 0;
  for (let i = 0; i < 3; i++) await runSession(`${name}-warm-${n++}`);
  const runs = [];
  for (let r = 0; r < repeat; r++) {
    const start = performance.now();
    for (let i = 0; i < sessions; i++) await runSession(`${name}-${r}-${n++}`);
    runs.push((performance.now() - start) / sessions);
  }
  return Math.round(median(runs) * 100) / 100;
}

const results = {};
const closers = [];
// JIT warm-up for every mode: the first mode measured would pay it otherwise.
await measure('jit', async (id) => {
  const agent = createAgent({ ...agentOptions(), sessionId: id });
  await agent.send('look the values up');
  agent.stop();
});
try {
  if (only.has('in-process')) {
    results['in-process'] = await measure('inproc', async (id) => {
      const agent = createAgent({ ...agentOptions(), sessionId: id });
      const result = await agent.send('look the values up');
      if (result.response !== 'All values looked up.') throw new Error(`unexpected ${result.response}`);
      agent.stop();
    });
  }
  if (only.has('seam')) {
    results.seam = await measure('seam', async (id) => {
      const recorded = new Map();
      const steps = {
        step: async (key, run) => {
          if (recorded.has(key)) return recorded.get(key);
          const value = await run();
          recorded.set(key, value);
          return value;
        },
      };
      const agent = createAgent({ ...agentOptions(), sessionId: id, durableSteps: steps });
      await agent.send('look the values up');
      agent.stop();
    });
  }
  if (only.has('restate')) {
    const { restateAgent, restateClient } = await import('../dist/engines/restate/index.js');
    const sdk = await import('@restatedev/restate-sdk');
    const server = await startRestate();
    closers.push(server.stop);
    const endpoint = http2.createServer(
      sdk.endpoint().bind(restateAgent('bench', agentOptions)).http2Handler(),
    );
    const open = new Set();
    endpoint.on('session', (s) => open.add(s));
    await new Promise((r) => endpoint.listen(0, '127.0.0.1', r));
    closers.push(async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => endpoint.close(r));
    });
    await server.register(`http://127.0.0.1:${endpoint.address().port}`);
    const client = restateClient({ url: server.ingress, agent: 'bench' });
    results.restate = await measure('restate', async (id) => {
      const result = await client.send(id, 'look the values up');
      if (result.response !== 'All values looked up.') throw new Error(`unexpected ${result.response}`);
    });
  }
  if (only.has('dbos')) {
    const { startPostgresCluster } = await import('../test/support/postgres-cluster.mjs');
    const pg = (await import('pg')).default;
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    const { dbosAgent } = await import('../dist/engines/dbos/index.js');
    const cluster = await startPostgresCluster({ durable: true });
    closers.push(() => cluster.stop());
    const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
    closers.push(() => pool.end());
    const agent = dbosAgent('bench', agentOptions, { pool, queuePollMs: Number(args['dbos-poll-ms'] ?? 50) });
    DBOS.setConfig({ name: 'agentloop-bench', systemDatabaseUrl: cluster.url, logLevel: 'error' });
    await DBOS.launch();
    closers.push(() => DBOS.shutdown());
    await agent.start();
    results.dbos = await measure('dbos', async (id) => {
      const result = await agent.send(id, 'look the values up');
      if (result.response !== 'All values looked up.') throw new Error(`unexpected ${result.response}`);
    });
  }
} finally {
  for (const close of closers.reverse()) await close().catch(() => {});
  await model.close();
}
const steps = TOOL_TURNS * 2 + 1;
const base = results['in-process'];
console.log(
  `ms per session (${TOOL_TURNS + 1} model calls, ${TOOL_TURNS} tool calls; ${sessions} sessions x ${repeat}, median):`,
);
for (const [mode, ms] of Object.entries(results)) {
  const over =
    base === undefined
      ? ''
      : `, +${Math.round(((ms - base) / steps) * 100) / 100} ms per step over in-process`;
  console.log(`  ${mode.padEnd(11)} ${ms} ms${over}`);
}
console.log(JSON.stringify(results));

/** restate-server from the dev dependency, on loopback ports read from its JSON log, data in a temp dir. */
async function startRestate() {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(
    require.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/package.json`),
  );
  const data = await mkdtemp(path.join(tmpdir(), 'bench-restate-'));
  const child = spawn(
    path.join(dir, 'bin', 'restate-server'),
    [
      '--no-logo',
      '--use-random-ports',
      'true',
      '--bind-ip',
      '127.0.0.1',
      '--listen-mode',
      'tcp',
      '--base-dir',
      data,
    ],
    { env: { ...process.env, RESTATE_LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const ports = {};
  await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const span = JSON.parse(line).span;
        if (span?.server_name) ports[span.server_name] = span['server.port'];
      } catch {}
      if (ports['http-ingress-server'] && ports['admin-api-server']) resolve();
    });
    child.once('exit', (code) => reject(new Error(`restate-server exited (${code})`)));
  });
  const admin = `http://127.0.0.1:${ports['admin-api-server']}`;
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${admin}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    ingress: `http://127.0.0.1:${ports['http-ingress-server']}`,
    async register(uri) {
      const response = await fetch(`${admin}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
      });
      if (!response.ok) throw new Error(`register: ${response.status} ${await response.text()}`);
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await rm(data, { recursive: true, force: true });
    },
  };
}
