// Issue 36 (dbosgap36): what the agent on bare DBOS steps (bench/engines.mjs `dbos-agent`) does per
// session that the hand-written loop on the same steps (`dbos-hand`) does not, counted rather than
// timed (counts do not move with the machine's load): inside each session's workflow (DBOS's workflow
// context at the moment, so DBOS's pollers and the client's result reads are left out) the async
// resources created, by type (promises, microtasks, `nextTick`s, timers, immediates: the awaits and
// the event-loop wakes), the statements sent to PostgreSQL on any pool (round trips), and afterwards
// the bytes each step wrote to `dbos.operation_outputs`; beside them this process's main-thread CPU
// per session (pollers included, modes in turn). With `--adapter`, the DBOS adapter's turn too.
// `--stacks`: where the timers, immediates and `nextTick`s come from (the first frames outside Node),
// those whose count differs between the agent and the loop.
// npm run build && node bench/dbos-step-wakes.mjs [--sessions=20] [--shapes=text,batch,chain]
//   [--poll-ms=10] [--adapter] [--stacks]
import { createHook } from 'node:async_hooks';
import pg from 'pg';
import { benchArgs, startBenchCluster } from './lib/engine-bench.mjs';
import {
  closeShapes,
  enqueueBareDbos,
  FINAL,
  handCompletes,
  registerAgentDbosWorkflow,
  registerBareDbosQueue,
  registerHandDbosWorkflow,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { threadCpuMs } from './lib/process-cpu.mjs';
import { meanSpread } from './lib/stats.mjs';

const args = benchArgs();
const sessions = Number(args.sessions ?? 20);
const shapes = (args.shapes ?? 'text,batch,chain').split(',');
const pollMs = Number(args['poll-ms'] ?? 10);
const wantStacks = 'stacks' in args;
const round = (x) => Math.round(x * 100) / 100;

const { DBOS } = await import('@dbos-inc/dbos-sdk');
const SHAPES = await startShapes();
const bench = await startBenchCluster();
const url = await bench.database('bench_wakes');
const pool = new pg.Pool({ connectionString: url, max: 4 });

/** Per workflow id: async resources by type, statements, and (`--stacks`) where the non-promises came from. */
const seen = new Map();
const entry = (id) => {
  let e = seen.get(id);
  if (!e) {
    e = { types: {}, statements: 0, stacks: new Map() };
    seen.set(id, e);
  }
  return e;
};
/** The workflow the current code runs in, if any (DBOS's context; never throws). */
const workflowNow = () => {
  try {
    return DBOS.workflowID;
  } catch {
    return undefined;
  }
};
let counting = false;
createHook({
  init(_id, type) {
    if (!counting) return;
    const wf = workflowNow();
    if (!wf) return;
    const e = entry(wf);
    e.types[type] = (e.types[type] ?? 0) + 1;
    if (wantStacks && type !== 'PROMISE' && type !== 'Microtask') {
      const frames = new Error().stack
        .split('\n')
        .slice(2)
        .filter((l) => !l.includes('(node:') && !l.includes('at node:') && !l.includes('dbos-step-wakes'))
        .slice(0, 3)
        .map((l) => l.trim().replace(/file:\/\/\/[^ ]*?\/(node_modules|dist|bench)\//, '$1/'));
      const key = `${type} ${frames.join(' < ')}`;
      e.stacks.set(key, (e.stacks.get(key) ?? 0) + 1);
    }
  },
}).enable();
// Every statement of any pool (DBOS's system pool, the sessions' pool) sent from inside a workflow.
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...a) {
  if (counting) {
    const wf = workflowNow();
    if (wf) entry(wf).statements++;
  }
  return query.apply(this, a);
};

const completes = handCompletes(SHAPES);
const agentWf = registerAgentDbosWorkflow(DBOS, SHAPES, { pool });
const handWf = registerHandDbosWorkflow(DBOS, completes, { pool });
let adapter;
if ('adapter' in args) {
  const { dbosAgent } = await import('../dist/engines/dbos/index.js');
  adapter = dbosAgent('wakes', (id) => shapeOptions(SHAPES, shapeOf(id)), { pool, queuePollMs: pollMs });
}
DBOS.setConfig({ name: 'agentloop-wakes', systemDatabaseUrl: url, logLevel: 'error' });
await DBOS.launch();
await adapter?.start();
await registerBareDbosQueue(DBOS, pollMs);

const modes = [
  ['dbos-agent', (id, shape) => enqueueBareDbos(DBOS, agentWf, id, shape)],
  ['dbos-hand', (id, shape) => enqueueBareDbos(DBOS, handWf, id, shape)],
  ...(adapter ? [['dbos', (id) => adapter.post(id, 'go')]] : []),
];
const runs = [];
let n = 0;
try {
  for (const shape of shapes) {
    // Warm-up, not counted.
    for (let i = 0; i < 5; i++) {
      for (const [, start] of modes) {
        const id = `${shape}.warm${n++}`;
        await DBOS.retrieveWorkflow(await start(id, shape)).getResult({ pollingIntervalMs: pollMs });
      }
    }
    for (let i = 0; i < sessions; i++) {
      for (const [mode, start] of i % 2 ? [...modes].reverse() : modes) {
        const id = `${shape}.s${n++}`;
        counting = true;
        const cpu0 = threadCpuMs();
        const wf = await start(id, shape);
        const result = await DBOS.retrieveWorkflow(wf).getResult({ pollingIntervalMs: pollMs });
        const cpu = threadCpuMs() - cpu0;
        counting = false;
        if (result.response !== FINAL) throw new Error(`${mode}: unexpected ${JSON.stringify(result)}`);
        runs.push({ mode, shape, wf, cpu });
      }
    }
  }
  // What each step recorded: bytes of its output, per workflow.
  const { rows } = await pool.query(
    `SELECT workflow_uuid AS wf, count(*)::int AS steps, sum(length(output))::int AS bytes
       FROM dbos.operation_outputs WHERE workflow_uuid = ANY($1) GROUP BY workflow_uuid`,
    [runs.map((r) => r.wf)],
  );
  const outputs = new Map(rows.map((r) => [r.wf, r]));
  console.log(
    `per session, mean of ${sessions} (+- one standard error where it moves): inside the workflow; modes in turn, poll ${pollMs} ms`,
  );
  for (const shape of shapes) {
    console.log(`${shape}:`);
    const byMode = {};
    for (const [mode] of modes) {
      const mine = runs.filter((r) => r.mode === mode && r.shape === shape);
      const types = {};
      for (const r of mine) {
        for (const [t, c] of Object.entries(seen.get(r.wf)?.types ?? {}))
          types[t] = (types[t] ?? 0) + c / mine.length;
      }
      const stmts = meanSpread(mine.map((r) => seen.get(r.wf)?.statements ?? 0));
      const steps = meanSpread(mine.map((r) => outputs.get(r.wf)?.steps ?? 0));
      const bytes = meanSpread(mine.map((r) => outputs.get(r.wf)?.bytes ?? 0));
      const cpu = meanSpread(mine.map((r) => r.cpu));
      byMode[mode] = mine;
      const typeCells = Object.entries(types)
        .sort()
        .map(([t, c]) => `${t} ${round(c)}`)
        .join(', ');
      console.log(
        `  ${mode.padEnd(11)} steps ${round(steps.mean)}, statements ${round(stmts.mean)} +- ${round(stmts.se)}, output bytes ${round(bytes.mean)}, main-thread CPU ${round(cpu.mean)} +- ${round(cpu.se)} ms | ${typeCells}`,
      );
    }
    if (wantStacks) {
      const tally = (mode) => {
        const out = new Map();
        for (const r of byMode[mode]) {
          for (const [k, c] of seen.get(r.wf)?.stacks ?? [])
            out.set(k, (out.get(k) ?? 0) + c / byMode[mode].length);
        }
        return out;
      };
      const a = tally('dbos-agent');
      const h = tally('dbos-hand');
      const keys = [...new Set([...a.keys(), ...h.keys()])]
        .map((k) => [k, (a.get(k) ?? 0) - (h.get(k) ?? 0)])
        .filter(([, d]) => Math.abs(d) >= 0.5)
        .sort((x, y) => y[1] - x[1]);
      console.log('  dbos-agent less dbos-hand, by where they are made (per session):');
      for (const [k, d] of keys) console.log(`    ${d > 0 ? '+' : ''}${round(d)}  ${k}`);
    }
  }
} finally {
  await DBOS.shutdown();
  await pool.end();
  await closeShapes(SHAPES);
  await bench.stop();
}
