// What PostgreSQL runs for a DBOS session (issue 36): every statement the cluster executes while the
// adapter's sessions run, against the bare engine's sessions of the same shape, the hand-written loop's
// on DBOS (keeping its session's messages: bench/lib/engine-shapes.mjs), and against the same
// wall time with no session running (DBOS's pollers alone), from `pg_stat_statements` (calls and
// execution time by statement, per session), with the cluster's CPU per session from /proc. Both pools
// (the adapter's and DBOS's system database) are in one database, as in bench/engines.mjs.
// npm run build && node bench/dbos-pg-statements.mjs [--shape=chain] [--sessions=20] [--poll-ms=50] [--top=25]

import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { benchArgs, startBenchCluster } from './lib/engine-bench.mjs';
import {
  closeShapes,
  enqueueBareDbos,
  FINAL,
  handCompletes,
  registerBareDbosQueue,
  registerBareDbosWorkflow,
  registerHandDbosWorkflow,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { procStat } from './lib/process-cpu.mjs';

const args = benchArgs();
const shape = args.shape ?? 'chain';
const sessions = Number(args.sessions ?? 20);
const pollMs = Number(args['poll-ms'] ?? 50);
const top = Number(args.top ?? 25);
const SHAPES = await startShapes();
const closers = [];
try {
  const bench = await startBenchCluster({
    settings: [
      'shared_preload_libraries=pg_stat_statements',
      'pg_stat_statements.track=all',
      'pg_stat_statements.track_planning=on',
    ],
  });
  closers.push(bench.stop);
  const url = await bench.database('bench_dbos');
  const stats = new pg.Client(url);
  await stats.connect();
  closers.push(() => stats.end());
  await stats.query('CREATE EXTENSION pg_stat_statements');
  const named = (name) => {
    const u = new URL(url);
    u.searchParams.set('application_name', name);
    return u.href;
  };
  const pool = new pg.Pool({ connectionString: named('agentloop-pool'), max: 4 });
  closers.push(() => pool.end());
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const { dbosAgent } = await import('../dist/engines/dbos/index.js');
  const agent = dbosAgent('bench', (id) => shapeOptions(SHAPES, shapeOf(id)), { pool, queuePollMs: pollMs });
  const bare = registerBareDbosWorkflow(DBOS);
  // The hand-written loop keeping its session's messages (bench/lib/engine-shapes.mjs), on the adapter's pool.
  const hand = registerHandDbosWorkflow(DBOS, handCompletes(SHAPES), { pool });
  DBOS.setConfig({ name: 'agentloop-bench', systemDatabaseUrl: named('dbos-system'), logLevel: 'error' });
  await DBOS.launch();
  closers.push(() => DBOS.shutdown());
  await agent.start();
  await registerBareDbosQueue(DBOS, pollMs);
  const check = (result) => {
    if (result.response !== FINAL) throw new Error(`unexpected ${result.response}`);
  };
  const modes = {
    dbos: async (id) => {
      const wf = await agent.post(id, 'go');
      check(await DBOS.retrieveWorkflow(wf).getResult({ pollingIntervalMs: pollMs }));
    },
    bare: async (id) => {
      const wf = await enqueueBareDbos(DBOS, bare, id, shape);
      check(await DBOS.retrieveWorkflow(wf).getResult({ pollingIntervalMs: pollMs }));
    },
    hand: async (id) => {
      const wf = await enqueueBareDbos(DBOS, hand, id, shape);
      check(await DBOS.retrieveWorkflow(wf).getResult({ pollingIntervalMs: pollMs }));
    },
  };
  // Warm both (JIT; the adapter's pool prepares its statements).
  for (let i = 0; i < 3; i++)
    for (const [m, run] of Object.entries(modes)) await run(`${shape}.warm-${m}-${i}`);
  // PostgreSQL's CPU by process: the adapter's pool, DBOS's system database pool (application names
  // set on their URLs), this script's own reader, and the rest (postmaster, WAL writer, checkpointer,
  // autovacuum; ended processes through the postmaster's children's time).
  const postmaster = Number(readFileSync(`${bench.cluster.dir}/data/postmaster.pid`, 'utf8').split('\n')[0]);
  const groups = new Map();
  const refreshGroups = async () => {
    const { rows } = await stats.query('SELECT pid, application_name, backend_type FROM pg_stat_activity');
    groups.clear();
    for (const r of rows)
      groups.set(
        r.pid,
        r.pid === stats.processID ? 'reader' : r.application_name || r.backend_type || 'other',
      );
  };
  const cpuByGroup = () => {
    const out = { ended: procStat(postmaster)?.children ?? 0, postmaster: procStat(postmaster)?.own ?? 0 };
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const s = procStat(entry);
      if (s?.ppid !== postmaster) continue;
      const g = groups.get(Number(entry)) ?? 'new';
      out[g] = (out[g] ?? 0) + s.own;
    }
    return out;
  };
  const statements = async () =>
    new Map(
      (
        await stats.query(
          `SELECT query, sum(calls)::int AS calls, sum(total_exec_time + total_plan_time)::float AS ms, sum(total_plan_time)::float AS plan
             FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' GROUP BY query`,
        )
      ).rows.map((r) => [r.query, r]),
    );
  const totals = {};
  const add = (mode, field, key, v) => {
    totals[mode] ??= { wall: 0, cpu: {}, st: {} };
    if (field === 'wall') totals[mode].wall += v;
    else totals[mode][field][key] = (totals[mode][field][key] ?? 0) + v;
  };
  let dbosWall = 0;
  let dbosRuns = 0;
  const order = ['dbos', 'bare', 'hand', 'idle'];
  for (let i = 0; i < sessions; i++) {
    for (let k = 0; k < order.length; k++) {
      const mode = order[(i + k) % order.length];
      await refreshGroups();
      const st0 = await statements();
      const c0 = cpuByGroup();
      const t0 = performance.now();
      if (mode === 'idle') await new Promise((r) => setTimeout(r, dbosRuns ? dbosWall / dbosRuns : 250));
      else await modes[mode](`${shape}.${mode}-${i}`);
      const wall = performance.now() - t0;
      const c1 = cpuByGroup();
      const st1 = await statements();
      if (mode === 'dbos') {
        dbosWall += wall;
        dbosRuns++;
      }
      add(mode, 'wall', '', wall);
      for (const [g, v] of Object.entries(c1)) add(mode, 'cpu', g, (v - (c0[g] ?? 0)) * 10);
      for (const [q, r] of st1) {
        const b = st0.get(q) ?? { calls: 0, ms: 0, plan: 0 };
        if (r.calls > b.calls) {
          const key = q.replace(/\s+/g, ' ').trim().slice(0, 110);
          add(mode, 'st', `${key}\u0000calls`, r.calls - b.calls);
          add(mode, 'st', `${key}\u0000ms`, r.ms - b.ms);
          add(mode, 'st', `${key}\u0000plan`, r.plan - b.plan);
        }
      }
    }
  }
  const per = (n) => Math.round(((n ?? 0) / sessions) * 100) / 100;
  console.log(
    `${shape}, ${sessions} sessions a mode, interleaved (dbos, bare, hand, idle in turn), poll ${pollMs} ms; idle = the dbos mode's mean wall with nothing enqueued`,
  );
  console.log(
    '\nper session: wall ms | PostgreSQL CPU ms by process group (10 ms ticks, summed, / sessions)',
  );
  for (const [mode, t] of Object.entries(totals)) {
    const sum = Object.values(t.cpu).reduce((a, b) => a + b, 0);
    const cells = Object.entries(t.cpu)
      .filter(([, v]) => v)
      .map(([g, v]) => `${g} ${per(v)}`)
      .join(', ');
    console.log(`${mode.padEnd(5)} wall ${per(t.wall)} | total ${per(sum)}: ${cells}`);
  }
  const keys = new Set();
  for (const t of Object.values(totals))
    for (const k of Object.keys(t.st)) if (k.endsWith('\u0000calls')) keys.add(k.split('\u0000')[0]);
  const cell = (mode, k, f) => per(totals[mode]?.st[`${k}\u0000${f}`]);
  const sumOf = (mode, f) =>
    per(Object.entries(totals[mode]?.st ?? {}).reduce((a, [k, v]) => a + (k.endsWith(f) ? v : 0), 0));
  console.log(
    `\nstatements per session: dbos ${sumOf('dbos', 'calls')} (plan + exec ${sumOf('dbos', 'ms')} ms), bare ${sumOf('bare', 'calls')} (${sumOf('bare', 'ms')} ms), hand ${sumOf('hand', 'calls')} (${sumOf('hand', 'ms')} ms), idle ${sumOf('idle', 'calls')} (${sumOf('idle', 'ms')} ms)`,
  );
  console.log(
    `of which planning: dbos ${sumOf('dbos', 'plan')} ms, bare ${sumOf('bare', 'plan')} ms, hand ${sumOf('hand', 'plan')} ms, idle ${sumOf('idle', 'plan')} ms`,
  );
  console.log(
    'calls dbos / bare / hand / idle | plan + exec ms dbos / bare / hand / idle (plan ms dbos / bare / hand / idle) | statement',
  );
  const sorted = [...keys].sort(
    (a, b) =>
      Math.abs(cell('dbos', b, 'calls') - cell('bare', b, 'calls')) -
        Math.abs(cell('dbos', a, 'calls') - cell('bare', a, 'calls')) ||
      cell('dbos', b, 'ms') - cell('dbos', a, 'ms'),
  );
  for (const k of sorted.slice(0, top))
    console.log(
      `${cell('dbos', k, 'calls')} / ${cell('bare', k, 'calls')} / ${cell('hand', k, 'calls')} / ${cell('idle', k, 'calls')} | ${cell('dbos', k, 'ms')} / ${cell('bare', k, 'ms')} / ${cell('hand', k, 'ms')} / ${cell('idle', k, 'ms')} (${cell('dbos', k, 'plan')} / ${cell('bare', k, 'plan')} / ${cell('hand', k, 'plan')} / ${cell('idle', k, 'plan')}) | ${k}`,
    );
} finally {
  for (const close of closers.reverse()) await close().catch((e) => console.error(e));
  await closeShapes(SHAPES);
}
