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
// `--probe` (dbos36c): each session's phases from marks (bench/lib/dbos-probe.mjs: every `DBOS.runStep`'s
// call, function start and end and return, the model request's start and the server's response
// flushed), per round of steps (react / pre / fn / post, a model round's fn split into lead / http /
// tail), the window's head and end; the in-process agent's model calls and the gaps between them; the
// statements each session sent per pool and how long any waited for a pool's connection.
// `--probe-dump`: the last session of each mode, every mark and statement in order. `--probe-windows=<file>`:
// each session's phases as windows of the monotonic clock, for a CPU profile taken meanwhile
// (`node --cpu-prof ...`, then bench/lib/profile-windows.mjs). Baselines beside the adapter (dbos36c):
// `--agent-wf`, the agent in a workflow of the bench's own, each effect a `DBOS.runStep` and nothing
// else of the adapter's; `--hand-wf`, the hand-written loop (no agentloop) with the same steps.
// npm run build && node bench/dbos-turn-timeline.mjs [--sessions=20] [--shapes=batch,chain] [--b=<dist>]
//   [--a=<dist>] [--poll-ms=20] [--flat] [--probe] [--probe-dump] [--probe-windows=<file>] [--agent-wf]
//   [--hand-wf]

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createAgent } from '../dist/index.js';
import {
  gcsWithin,
  installProbe,
  probedPhases,
  probedWindows,
  probePool,
  takeMarks,
} from './lib/dbos-probe.mjs';
import { benchArgs, startBenchCluster } from './lib/engine-bench.mjs';
import {
  closeShapes,
  enqueueBareDbos,
  FINAL,
  handCompletes,
  jsonStep,
  registerBareDbosQueue,
  registerBareDbosWorkflow,
  registerHandDbosWorkflow,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { meanSpread } from './lib/stats.mjs';

const args = benchArgs();
const sessions = Number(args.sessions ?? 20);
const { DBOS } = await import('@dbos-inc/dbos-sdk');
// A flag given alone is a key with no value (benchArgs): look for the key.
const probe = 'probe' in args;
if (probe) installProbe(DBOS);
// `--a=<dist>`: mode `dbos-a` from another build (with `--b`, two builds swap places between runs).
const builds = {
  a: await import(args.a ? path.resolve(args.a, 'engines/dbos/index.js') : '../dist/engines/dbos/index.js'),
};
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
      const entry = [name, performance.now(), Number.NaN, sql, client, 0];
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
if (probe) {
  probePool('sys', sysPool);
  probePool('app', appPool);
}
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
/**
 * `--agent-wf`: the agent in a workflow of the bench's own with no adapter (no sessions table, no
 * interrupt watch, no turn loop): each effect a `DBOS.runStep` recording JSON text, as the adapter's
 * steps do; on the bare engine's queue. What the agent on DBOS steps costs before anything else of
 * the adapter's.
 */
/** `--hand-wf`: the hand-written loop as a DBOS workflow (bench/lib/engine-shapes.mjs), on the bare queue. */
const handWf = 'hand-wf' in args ? registerHandDbosWorkflow(DBOS, handCompletes(SHAPES)) : undefined;
const agentWf =
  'agent-wf' in args
    ? DBOS.registerWorkflow(
        async (id) => {
          const steps = { step: (key, run) => jsonStep(DBOS, key, run) };
          const agent = createAgent({
            ...shapeOptions(SHAPES, shapeOf(id)),
            sessionId: id.replace('~', '.'),
            durableSteps: steps,
          });
          try {
            const r = await agent.send('go');
            return { response: r.response };
          } finally {
            agent.stop();
          }
        },
        { name: 'bench.agentwf' },
      )
    : undefined;
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
  return {
    total,
    steps: inSteps,
    app: inApp,
    db: inDb,
    between: total - inDb,
    n: steps.length,
    end,
    from,
    fromCpu: claim[5],
  };
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
  ...(agentWf ? [{ name: 'agent-wf', run: session((id) => enqueueBareDbos(DBOS, agentWf, id, id)) }] : []),
  ...(handWf
    ? [{ name: 'hand-wf', run: session((id) => enqueueBareDbos(DBOS, handWf, id, shapeOf(id))) }]
    : []),
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
function dump(mode, shape, marks, entries, from) {
  const rows = [
    ...marks.map(([t, what, detail]) => [t, t, `${what} ${detail ?? ''}`]),
    ...entries.map((e) => [e[1], e[2], `${e[0]} ${e[3].slice(0, 70)}`]),
  ].sort((x, y) => x[0] - y[0]);
  console.log(`--probe-dump ${shape} ${mode} (ms from the queue's claim; statements: start +duration)`);
  for (const [t0, t1, what] of rows)
    console.log(
      `  ${(t0 - from).toFixed(2).padStart(8)} ${t1 > t0 ? `+${(t1 - t0).toFixed(2)}`.padEnd(7) : ''.padEnd(7)} ${what}`,
    );
}
/** `--probe`: per shape and mode, each session's phases ({@link probedPhases}), statements and waits. */
const probes = {};
/** `--probe-windows=<file>`: every session's phases as [mode phase, start us, end us], written there. */
const windows = [];
/** performance.now() times as the monotonic clock's us, by a session's first mark. */
const usOf = (marks, ...ts) =>
  ts.map((t) => t * 1000 + (marks.length ? marks[0][4] - marks[0][0] * 1000 : 0));
const probeOf = (probed, window, entries) => ({
  ...probedPhases({ ...probed, ...window, statements: entries }),
  'stmt.sys': entries.filter((e) => e[0] === 'sys').length,
  'stmt.app': entries.filter((e) => e[0] === 'app').length,
  'stmt.sys.window': entries.filter((e) => e[0] === 'sys' && e[1] >= window.from && e[2] <= window.to).length,
  'wait.n': probed.waits.length,
  'wait.ms': probed.waits.reduce((a, w) => a + w[1], 0),
  'wait.app.ms': probed.waits.reduce((a, w) => a + (w[0] === 'app' ? w[1] : 0), 0),
  'wait.max.ms': probed.waits.reduce((a, w) => Math.max(a, w[1]), 0),
  'gc.n': gcsWithin(window.from, window.to).length,
  'gc.ms': gcsWithin(window.from, window.to).reduce((a, g) => a + g[1], 0),
  'gc.major.ms': gcsWithin(window.from, window.to).reduce((a, g) => a + (g[2] ? g[1] : 0), 0),
});
/** Per shape and mode: each phase's mean, its standard error, its median, and the mode less bare. */
const timeline = {};
let n = 0;
try {
  for (const shape of shapes) {
    const rows = Object.fromEntries(modes.map((m) => [m.name, []]));
    const clientSides = Object.fromEntries(modes.map((m) => [m.name, []]));
    const inproc = [];
    const inprocCpu = [];
    probes[shape] = Object.fromEntries([...modes.map((m) => [m.name, []]), ['in-process', []]]);
    for (let i = -3; i < sessions; i++) {
      for (let k = 0; k < modes.length; k++) {
        const m = modes[(i + 3 + k) % modes.length];
        log = [];
        takeMarks();
        const cpu = process.cpuUsage();
        const side = await m.run(`${shape}~${m.name}-${n++}`);
        const used = process.cpuUsage(cpu);
        const a = analyse(log);
        const probed = takeMarks();
        if (args['probe-windows'] && i >= 0)
          windows.push(
            ...probedWindows(probed.marks, log).map(([phase, a, b]) => [`${m.name} ${phase}`, a, b]),
            [`${m.name} window`, ...usOf(probed.marks, a.from, a.end.at)],
          );
        if (probe && i >= 0 && a)
          probes[shape][m.name].push({
            ...probeOf(probed, { from: a.from, to: a.end.at }, log),
            'cpu.window': a.end.cpu - a.fromCpu,
          });
        // `--probe-dump`: the last session of each mode, every mark and statement in order.
        if ('probe-dump' in args && i === sessions - 1 && a) dump(m.name, shape, probed.marks, log, a.from);
        if (i >= 0 && a) rows[m.name].push({ ...a, cpu: (used.user + used.system) / 1000 });
        side.polls = log.filter((e) => e[0] === 'sys' && RESULT_POLL.test(e[3])).length;
        side.end = a?.end;
        if (i >= 0) clientSides[m.name].push(side);
      }
      log = [];
      takeMarks();
      const start = performance.now();
      const cpu = process.cpuUsage();
      await inProcess(`${shape}~inproc-${n++}`);
      const used = process.cpuUsage(cpu);
      const stop = performance.now();
      if (i >= 0) inproc.push(stop - start);
      if (i >= 0) inprocCpu.push((used.user + used.system) / 1000);
      const probed = takeMarks();
      if (probe && i >= 0)
        probes[shape]['in-process'].push({
          ...probeOf(probed, { from: start, to: stop }, log),
          'cpu.window': (used.user + used.system) / 1000,
        });
      if (args['probe-windows'] && i >= 0)
        windows.push(...probedWindows(probed.marks).map(([phase, a, b]) => [`in-process ${phase}`, a, b]), [
          'in-process window',
          ...usOf(probed.marks, start, stop),
        ]);
    }
    report[shape] = { 'in-process': round(median(inproc)), 'in-process CPU': round(median(inprocCpu)) };
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
  console.log(`${shape}: in-process ${r['in-process']}, its CPU ${r['in-process CPU']}`);
  for (const [name, o] of Object.entries(r)) {
    if (name.startsWith('in-process')) continue;
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
if (args['probe-windows']) writeFileSync(args['probe-windows'], JSON.stringify(windows));
if (probe) {
  console.log(
    '--probe: ms per session, mean +- standard error (rounds: a round is one step, or steps run at once)',
  );
  for (const [shape, byMode] of Object.entries(probes)) {
    console.log(`${shape}:`);
    const keys = [
      ...new Set(Object.values(byMode).flatMap((list) => list.flatMap((p) => Object.keys(p)))),
    ].sort();
    for (const key of keys) {
      const cells = Object.entries(byMode).map(([name, list]) => {
        const ms = meanSpread(list.map((p) => p[key] ?? 0));
        return `${name} ${round(ms.mean)} +- ${round(ms.se)}`;
      });
      console.log(`  ${key.padEnd(16)} ${cells.join(' | ')}`);
    }
  }
}
console.log(JSON.stringify({ report, timeline, ...(probe ? { probes } : {}) }));
