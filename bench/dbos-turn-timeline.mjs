// Issue 36: where a DBOS turn's time goes, from its dequeue to its end, next to the bare engine's
// workflow doing the same number of steps and the agent in process: every statement on DBOS's system
// pool and the application's pool timed (call to result), turns of the three modes interleaved, one
// at a time. Per shape (medians over the sessions): dequeue to end; the time inside DBOS's step
// transactions (BEGIN .. COMMIT of a step's record, overlapping ones merged); the adapter's own
// statements; the rest ("between": the agent's work, the model's and tools' calls, the adapter's
// awaits), against the in-process agent's whole session; and this process's CPU per session (enqueue
// to result, DBOS's pollers included).
// And each session from its enqueue to the client seeing its result, in four phases that add up to it:
// enqueue (the client's call until DBOS holds the workflow), pickup (until the queue's claim, DBOS's
// `started_at_epoch_ms`), run (until DBOS's record of the end, `updated_at`: bench/engines.mjs'
// `dbos-run`) and result (until the client's polled `getResult` returns), with the statements the
// client's wait issued; per mode the mean +- its standard error and the median, and each mode less the
// bare engine session by session (the modes run in turn, so the k-th sessions ran side by side). The
// adapter and the bare engine are enqueued on queues with the same settings (partitioned by session,
// one at a time, polled every `--poll-ms`) and waited for with the same call; `--flat` adds the bare
// engine on a plain queue (a different dequeue), to see what the partitioning itself costs.
// npm run build && node bench/dbos-turn-timeline.mjs [--sessions=20] [--shapes=batch,chain] [--b=<dist>]
//   [--poll-ms=20] [--flat]
import path from 'node:path';
import pg from 'pg';
import { createAgent } from '../dist/index.js';
import { benchArgs, startBenchCluster } from './lib/engine-bench.mjs';
import {
  closeShapes,
  enqueueBareDbos,
  FINAL,
  registerBareDbosQueue,
  registerBareDbosWorkflow,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { meanSpread } from './lib/stats.mjs';

const args = benchArgs();
const sessions = Number(args.sessions ?? 20);
const { DBOS } = await import('@dbos-inc/dbos-sdk');
const builds = { a: await import('../dist/engines/dbos/index.js') };
if (args.b) builds.b = await import(path.resolve(args.b, 'engines/dbos/index.js'));
const SHAPES = await startShapes();
const shapes = (args.shapes ?? 'text,batch,chain').split(',');
const cluster = await startBenchCluster();
const url = new URL(await cluster.database('turn_timeline'));

/** This process's CPU time so far, ms. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
/** Statements seen: [pool, start ms, end ms, text, client, this process's CPU ms at the end]. */
let log = [];
const timedPool = (name, max) => {
  const pool = new pg.Pool({ connectionString: url.href, max });
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (text, ...rest) => {
      const sql = (typeof text === 'string' ? text : text.text).replace(/\s+/g, ' ').trim();
      const entry = [name, performance.now(), 0, sql, client, 0];
      log.push(entry);
      const done = () => {
        entry[2] = performance.now();
        entry[5] = cpuMs();
      };
      const last = rest.at(-1);
      if (typeof last === 'function') {
        rest[rest.length - 1] = (...r) => {
          done();
          return last(...r);
        };
      }
      const out = query(text, ...rest);
      if (out && typeof out.then === 'function') out.then(done, done);
      return out;
    };
  });
  return pool;
};
const sysPool = timedPool('sys', 10);
const appPool = timedPool('app', 4);
const pollMs = Number(args['poll-ms'] ?? 20);
// A flag given alone is a key with no value (benchArgs): look for the key.
const flat = 'flat' in args;
const agents = Object.fromEntries(
  Object.entries(builds).map(([k, b]) => [
    k,
    b.dbosAgent(`tl${k}`, (id) => shapeOptions(SHAPES, shapeOf(id)), { pool: appPool, queuePollMs: pollMs }),
  ]),
);
const bare = registerBareDbosWorkflow(DBOS);
DBOS.setConfig({ name: 'turn-timeline', systemDatabasePool: sysPool, logLevel: 'error' });
await DBOS.launch();
for (const agent of Object.values(agents)) await agent.start();
await registerBareDbosQueue(DBOS, pollMs);
if (flat) await registerBareDbosQueue(DBOS, pollMs, { name: 'bench_bare_flat', partitioned: false });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round = (x) => Math.round(x * 100) / 100;
/** Total length of the union of intervals. */
const union = (intervals) => {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [s, e] of sorted) {
    if (e <= end) continue;
    total += e - Math.max(s, end);
    end = e;
  }
  return total;
};

/** Reads one turn's timeline from the statements logged while it ran. */
function analyse(entries) {
  const claim = entries.find((e) => e[0] === 'sys' && /SET status = \$1, owner_xid = \$8/.test(e[3]));
  const output = entries.findLast((e) => e[0] === 'sys' && /INSERT INTO "dbos".workflow_output/.test(e[3]));
  if (!claim || !output) return undefined;
  const from = claim[2];
  // The COMMIT on the same client after the output's insert.
  const commit = entries.find((e) => e[4] === output[4] && e[1] >= output[2] && e[3] === 'COMMIT');
  const to = (commit ?? output)[2];
  const inside = entries.filter((e) => e[1] >= from && e[2] <= to);
  // Step transactions: from a BEGIN to its client's next COMMIT, when an operation_outputs insert is between.
  const steps = [];
  const byClient = new Map();
  for (const e of inside) {
    if (e[0] !== 'sys') continue;
    const open = byClient.get(e[4]);
    if (/^BEGIN/.test(e[3])) byClient.set(e[4], { start: e[1], step: false });
    else if (open && /operation_outputs \(workflow_uuid/.test(e[3])) open.step = true;
    else if (open && e[3] === 'COMMIT') {
      if (open.step) steps.push([open.start, e[2]]);
      byClient.delete(e[4]);
    }
  }
  // The workflow's own statements outside transactions: the status checks and the read of a step's record.
  const own = inside
    .filter((e) => e[0] === 'sys' && /^SELECT (status FROM|output, error, child_workflow_id)/.test(e[3]))
    .map((e) => [e[1], e[2]]);
  const app = inside
    .filter((e) => e[0] === 'app' && !/workflow_id = ANY/.test(e[3]))
    .map((e) => [e[1], e[2]]);
  const total = to - from;
  const inSteps = union(steps);
  const inApp = union(app);
  const inDb = union([...steps, ...own, ...app, [output[1], to]]);
  // Where the turn's end was recorded (the commit of DBOS's output row), for what follows it.
  const end = { at: to, cpu: (commit ?? output)[5] };
  return { total, steps: inSteps, app: inApp, db: inDb, between: total - inDb, n: steps.length, end };
}

/** Epoch ms with a fraction, comparable with DBOS's epoch-ms columns (one machine, one clock). */
const epochNow = () => performance.timeOrigin + performance.now();
/** The statement a client's `getResult` polls with. */
const RESULT_POLL = /^SELECT ws\.status, COALESCE\(wo\.output, ws\.output\)/;
/**
 * One session of a mode: `enqueue(id)` resolves with the workflow id once DBOS holds it; every mode
 * then waits for the result with the same call. Returns the client's side of its timeline.
 */
const session = (enqueue) => async (id) => {
  const t0 = epochNow();
  const workflowId = await enqueue(id);
  const posted = epochNow();
  const r = await DBOS.retrieveWorkflow(workflowId).getResult({ pollingIntervalMs: pollMs });
  const t1 = epochNow();
  const cpu1 = cpuMs();
  if (r.response !== FINAL) throw new Error(`unexpected ${r.response}`);
  return { workflowId, t0, posted, t1, seen: performance.now(), cpu1 };
};
const modes = [
  ...Object.entries(agents).map(([k, agent]) => ({
    name: `dbos-${k}`,
    run: session((id) => agent.post(id, 'go')),
  })),
  { name: 'bare', run: session((id) => enqueueBareDbos(DBOS, bare, id, shapeOf(id))) },
  ...(flat
    ? [
        {
          name: 'bare-flat',
          run: session((id) =>
            enqueueBareDbos(DBOS, bare, id, shapeOf(id), { name: 'bench_bare_flat', partitioned: false }),
          ),
        },
      ]
    : []),
];
/**
 * `outside`: enqueue + pickup + result, the session less DBOS's run window; `after` and `afterCpu`:
 * from the commit of DBOS's record of the end (as this process saw it) to the result seen, wall ms and
 * this process's CPU ms (work left over from the turn would show there).
 */
const PHASES = ['enqueue', 'pickup', 'run', 'result', 'outside', 'session', 'polls', 'after', 'afterCpu'];
const seenAfterEnd = (c) => c.end !== undefined && c.end.at > 0 && c.end.at <= c.seen;
/** The four phases of each session (ms) from the client's times and DBOS's records of it. */
async function phasesOf(clientSide) {
  const { rows } = await sysPool.query(
    'SELECT workflow_uuid AS id, started_at_epoch_ms AS started, updated_at AS ended FROM dbos.workflow_status WHERE workflow_uuid = ANY($1)',
    [clientSide.map((c) => c.workflowId)],
  );
  const byId = new Map(rows.map((r) => [r.id, { started: Number(r.started), ended: Number(r.ended) }]));
  return clientSide.map((c) => {
    const d = byId.get(c.workflowId);
    return {
      enqueue: c.posted - c.t0,
      pickup: d.started - c.posted,
      run: d.ended - d.started,
      result: c.t1 - d.ended,
      outside: c.t1 - c.t0 - (d.ended - d.started),
      session: c.t1 - c.t0,
      polls: c.polls,
      // Only where the end's commit was found before the result was seen (a session whose log
      // matched another commit is left out).
      after: seenAfterEnd(c) ? c.seen - c.end.at : Number.NaN,
      afterCpu: seenAfterEnd(c) ? c.cpu1 - c.end.cpu : Number.NaN,
    };
  });
}
const inProcess = async (id) => {
  const agent = createAgent({ ...shapeOptions(SHAPES, shapeOf(id)), sessionId: id.replace('~', '.') });
  const r = await agent.send('go');
  if (r.response !== FINAL) throw new Error(`unexpected ${r.response}`);
  agent.stop();
};
const report = {};
/** Per shape and mode: each phase's mean, its standard error, its median, and the mode less bare. */
const timeline = {};
let n = 0;
try {
  for (const shape of shapes) {
    const rows = Object.fromEntries(modes.map((m) => [m.name, []]));
    const clientSides = Object.fromEntries(modes.map((m) => [m.name, []]));
    const inproc = [];
    for (let i = -3; i < sessions; i++) {
      for (let k = 0; k < modes.length; k++) {
        const m = modes[(i + 3 + k) % modes.length];
        log = [];
        const cpu = process.cpuUsage();
        const side = await m.run(`${shape}~${m.name}-${n++}`);
        const used = process.cpuUsage(cpu);
        const a = analyse(log);
        if (i >= 0 && a) rows[m.name].push({ ...a, cpu: (used.user + used.system) / 1000 });
        side.polls = log.filter((e) => e[0] === 'sys' && RESULT_POLL.test(e[3])).length;
        side.end = a?.end;
        if (i >= 0) clientSides[m.name].push(side);
      }
      const start = performance.now();
      await inProcess(`${shape}~inproc-${n++}`);
      if (i >= 0) inproc.push(performance.now() - start);
    }
    report[shape] = { 'in-process': round(median(inproc)) };
    for (const [name, list] of Object.entries(rows)) {
      const out = {};
      for (const key of ['total', 'steps', 'app', 'db', 'between', 'n', 'cpu'])
        out[key] = round(median(list.map((r) => r[key])));
      report[shape][name] = out;
    }
    // The timeline of a session, enqueue to result seen, per mode; and each mode less the bare engine.
    const phases = {};
    for (const m of modes) phases[m.name] = await phasesOf(clientSides[m.name]);
    timeline[shape] = {};
    for (const m of modes) {
      const list = phases[m.name];
      const out = {};
      for (const key of PHASES) {
        const xs = list.map((p) => p[key]);
        const ms = meanSpread(xs);
        out[key] = { mean: round(ms.mean), se: round(ms.se), median: round(median(xs)) };
        if (m.name !== 'bare') {
          const bareXs = phases.bare.map((p) => p[key]);
          const k = Math.min(xs.length, bareXs.length);
          const d = meanSpread(xs.slice(0, k).map((x, j) => x - bareXs[j]));
          out[key].overBare = { mean: round(d.mean), se: round(d.se) };
        }
      }
      timeline[shape][m.name] = out;
    }
  }
} finally {
  await DBOS.shutdown();
  await sysPool.end();
  await appPool.end();
  await cluster.stop();
  await closeShapes(SHAPES);
}
console.log('ms, medians per turn (dequeue to end; in DBOS step transactions; adapter statements; all');
console.log("statements; between them), and the in-process agent's whole session:");
for (const [shape, r] of Object.entries(report)) {
  console.log(`${shape}: in-process ${r['in-process']}`);
  for (const [name, o] of Object.entries(r)) {
    if (name === 'in-process') continue;
    console.log(
      `  ${name.padEnd(8)} total ${o.total}, steps ${o.steps} (${o.n}), adapter ${o.app}, db ${o.db}, between ${o.between}; this process's CPU ${o.cpu}`,
    );
  }
}
console.log(
  `a session, enqueue to result seen (ms, mean +- standard error [median] of ${sessions} sessions; queue and result polled every ${pollMs} ms; "polls": the client's result reads):`,
);
for (const [shape, r] of Object.entries(timeline)) {
  console.log(`${shape}:`);
  for (const [name, o] of Object.entries(r)) {
    const cell = (k) => `${k} ${o[k].mean} +- ${o[k].se} [${o[k].median}]`;
    console.log(`  ${name.padEnd(9)} ${PHASES.map(cell).join(', ')}`);
    if (name !== 'bare') {
      const diff = (k) => `${k} ${o[k].overBare.mean} +- ${o[k].overBare.se}`;
      console.log(`  ${''.padEnd(9)} less bare, session by session: ${PHASES.map(diff).join(', ')}`);
    }
  }
}
console.log(JSON.stringify({ report, timeline }));
