// Issue 36: the bare engine of bench/engines.mjs in the turn's shape (BARE_PLANS: a batch's tool steps
// started together, records of the adapter's sizes) against the baseline it replaced (as many steps one
// after another, 1 KB each), interleaved on the same engine, so that the change of baseline can be
// read apart from the machine's load. DBOS: ms per session (enqueue to result, polled every 50 ms) and
// dequeue to end (DBOS's records); Restate: ms per call through the ingress.
// npm run build && node bench/engine-bare-shapes.mjs [--sessions=10] [--only=dbos,restate]
import { benchArgs, onlyOf, startBenchCluster } from './lib/engine-bench.mjs';
import {
  BARE_PLANS,
  bareRestateObject,
  FINAL,
  registerBareDbosWorkflow,
  sendBareRestate,
  serveRestateEndpoint,
} from './lib/engine-shapes.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const sessions = Number(args.sessions ?? 10);
const only = onlyOf(args, 'dbos,restate');
const shapes = Object.keys(BARE_PLANS);
const stepsOf = (shape) => BARE_PLANS[shape].flat().length;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 100) / 100;
const oneKb = async () => 'x'.repeat(1024);
const check = (r) => {
  if (r.response !== FINAL) throw new Error(`unexpected ${JSON.stringify(r)}`);
};

/** Runs each mode's session in turn, `sessions` rounds after one warm-up round; ms per session by mode. */
async function interleaved(shape, modes) {
  const ms = Object.fromEntries(Object.keys(modes).map((m) => [m, []]));
  for (let i = -1; i < sessions; i++) {
    const order = Object.keys(modes);
    if (i % 2) order.reverse();
    for (const m of order) {
      const start = performance.now();
      await modes[m](`${shape}.${m}.${i + 1}`);
      if (i >= 0) ms[m].push(performance.now() - start);
    }
  }
  return Object.fromEntries(Object.entries(ms).map(([m, xs]) => [m, round(median(xs))]));
}

const out = {};
const closers = [];
try {
  if (only.has('dbos')) {
    const bench = await startBenchCluster();
    closers.push(bench.stop);
    const url = await bench.database('bench_bare_shapes');
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    const shaped = registerBareDbosWorkflow(DBOS);
    const sequential = DBOS.registerWorkflow(
      async (steps) => {
        for (let i = 0; i < steps; i++) await DBOS.runStep(oneKb, { name: `step-${i}` });
        return { response: FINAL };
      },
      { name: 'bench.bare-seq' },
    );
    DBOS.setConfig({ name: 'bare-shapes', systemDatabaseUrl: url, logLevel: 'error' });
    await DBOS.launch();
    closers.push(() => DBOS.shutdown());
    await DBOS.registerQueue('bench_bare', { minPollingIntervalMs: 50 });
    const ids = { shaped: [], sequential: [] };
    const run = (mode, start) => async (id) => {
      const handle = await DBOS.startWorkflow(start.wf, { queueName: 'bench_bare' })(start.input(id));
      if (!id.endsWith('.0')) ids[mode].push({ shape: id.split('.')[0], wf: handle.workflowID });
      check(await handle.getResult({ pollingIntervalMs: 50 }));
    };
    for (const shape of shapes) {
      out[`dbos ${shape} session`] = await interleaved(shape, {
        shaped: run('shaped', { wf: shaped, input: () => shape }),
        sequential: run('sequential', { wf: sequential, input: () => stepsOf(shape) }),
      });
    }
    // Dequeue to end from DBOS's own records: the engine's time without the queue's and result's polls.
    const pg = (await import('pg')).default;
    const client = new pg.Client(url);
    await client.connect();
    const { rows } = await client
      .query('SELECT workflow_uuid AS wf, updated_at - started_at_epoch_ms AS ms FROM dbos.workflow_status')
      .finally(() => client.end());
    const runMs = new Map(rows.map((r) => [r.wf, Number(r.ms)]));
    for (const shape of shapes) {
      out[`dbos ${shape} dequeue to end`] = Object.fromEntries(
        Object.entries(ids).map(([m, xs]) => [
          m,
          round(median(xs.filter((x) => x.shape === shape).map((x) => runMs.get(x.wf)))),
        ]),
      );
    }
  }
  if (only.has('restate')) {
    // The adapter's module provides `Promise.withResolvers`, which the SDK needs and Node 20 lacks.
    await import('../dist/engines/restate/index.js');
    const sdk = await import('@restatedev/restate-sdk');
    const { startRestateServer } = await import('../test/support/restate-server.mjs');
    const server = await startRestateServer();
    closers.push(server.stop);
    const sequential = sdk.object({
      name: 'bareseq',
      handlers: {
        send: async (ctx, input) => {
          for (let i = 0; i < input.steps; i++) await ctx.run(`step-${i}`, oneKb);
          return { response: FINAL };
        },
      },
    });
    const endpoint = await serveRestateEndpoint(sdk, server, [bareRestateObject(sdk), sequential]);
    closers.push(endpoint.close);
    for (const shape of shapes) {
      out[`restate ${shape} call`] = await interleaved(shape, {
        shaped: async (id) => check(await sendBareRestate(server.ingress, id, shape)),
        sequential: async (id) => {
          const response = await fetch(`${server.ingress}/bareseq/${encodeURIComponent(id)}/send`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ steps: stepsOf(shape) }),
            signal: AbortSignal.timeout(60_000),
          });
          check(await response.json());
        },
      });
    }
  }
} finally {
  for (const close of closers.reverse()) await close().catch((e) => console.error(e));
}
console.log(
  `ms, median of ${sessions} sessions a mode, interleaved (shaped: the turn's shape; sequential: before):`,
);
for (const [what, m] of Object.entries(out))
  console.log(`  ${what.padEnd(26)} shaped ${m.shaped}, sequential ${m.sequential}`);
