// Persistence cost on PostgreSQL (issue 14): per rest point (the record save) and per tool call (its
// two transcript lines, each awaited as the agent does), p50 and p99, on a throwaway cluster with
// PostgreSQL's durable defaults (fsync on). Then sessions per second with 1, 2 and 4 worker processes
// on the bench task shape (one tool call per model turn, 50 ms model latency), with a profile of each
// run: statements by kind and commits per session, WAL flushes, CPU of the workers, of this process
// (the scripted model server and the client) and of PostgreSQL.
// Each worker count starts with `warmup` sessions per worker that are not timed (JIT warm-up); then
// `repeat` timed runs of `sessions` per count, alternating between the counts; medians reported.
// `--concurrency` is each worker's (default: startWorker's own). The profile also gives the cores the
// run kept busy (all CPU counted, over the wall time): what a worker count can add is bounded by the
// cores left idle.
// npm run build && node bench/postgres-persistence.mjs [--rounds=400] [--sessions=60] [--warmup=16] [--repeat=5] [--concurrency=N] [--profile]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSessionClient } from '../dist/index.js';
import { PostgresSessionStore } from '../dist/postgres/index.js';
import { startScriptedServer } from '../dist/testing/index.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.mjs';
import { countingPool, countsByKind } from './lib/counting-pool.mjs';
import { flagArgs } from './lib/flags.mjs';
import { clusterCpuMs, cpuMsOf } from './lib/process-cpu.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const rounds = Number(args.rounds ?? 400);
const sessions = Number(args.sessions ?? 60);
const warmup = Number(args.warmup ?? 16);
const repeat = Number(args.repeat ?? 5);
/** Each worker's concurrency; undefined: startWorker's default. */
const concurrency = args.concurrency === undefined ? undefined : Number(args.concurrency);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};
const per = (n, d) => Math.round((n / d) * 10) / 10;

const cluster = await startPostgresCluster({ durable: true });
const out = {};
const profile = {};
/** Commits and WAL flushes of the whole cluster so far. */
const walCounters = async (pool) => {
  const { rows } = await pool.query(
    `SELECT (SELECT sum(xact_commit) FROM pg_stat_database)::float8 AS commits, wal_sync::float8 AS syncs FROM pg_stat_wal`,
  );
  return rows[0];
};
try {
  const counts = {};
  const pool = countingPool(cluster.url, 4, counts);
  const store = new PostgresSessionStore({ pool }, { schema: 'bench' });
  await store.migrate();
  const lease = await store.acquireLease('b1', { owner: 'bench', leaseMs: 60_000 });
  const snapshot = {
    status: 'active',
    value: 'AwaitingInput',
    context: {
      messages: Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `message ${i} `.repeat(20) })),
    },
  };
  const saves = [];
  const calls = [];
  const count = () => Object.values(counts).reduce((a, b) => a + b, 0);
  let saveStatements = 0;
  let callStatements = 0;
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    let n = count();
    await store.save({ id: 'b1', state: 'AwaitingInput', snapshot, turns: i }, { lease });
    saves.push(performance.now() - t);
    saveStatements += count() - n;
    t = performance.now();
    n = count();
    await store.appendTranscript(
      'b1',
      [{ kind: 'tool_call_started', toolCallId: `c${i}`, name: 'lookup', args: { q: i } }],
      { lease },
    );
    await store.appendTranscript(
      'b1',
      [
        {
          kind: 'tool_call_finished',
          toolCallId: `c${i}`,
          name: 'lookup',
          result: 'x'.repeat(1024),
          isError: false,
          durationMs: 1,
        },
      ],
      { lease },
    );
    calls.push(performance.now() - t);
    callStatements += count() - n;
  }
  out.restPointMs = { p50: pct(saves, 50), p99: pct(saves, 99) };
  out.toolCallMs = { p50: pct(calls, 50), p99: pct(calls, 99) };
  profile.statementsPerRestPoint = per(saveStatements, rounds);
  profile.statementsPerToolCall = per(callStatements, rounds);
  profile.snapshotJsonBytes = JSON.stringify(snapshot).length;
  await store.close();
  await pool.end();

  const server = await startScriptedServer({
    latencyMs: 50,
    record: false,
    scenario: {
      turns: [
        ...Array.from({ length: 5 }, (_, i) => ({
          toolCalls: [{ name: 'lookup', arguments: { item: `i${i}` } }],
        })),
        { content: 'done' },
      ],
    },
  });
  out.sessionsPerSecond = {};
  const admin = countingPool(cluster.url, 1, {});
  // One set of worker processes per count, each on a schema of its own, started and warmed up
  // together; then the timed runs alternate (1, 2, 4, 1, 2, 4, ...) so that a change in the load of
  // the shared machine hits every count alike. Each figure is the median of `repeat` runs.
  const sets = [];
  for (const workers of [1, 2, 4]) {
    const schema = `bench_w${workers}`;
    const clientCounts = {};
    const clientPool = countingPool(cluster.url, 10, clientCounts);
    const s = new PostgresSessionStore({ pool: clientPool }, { schema });
    await s.migrate();
    const config = JSON.stringify({ url: cluster.url, schema, baseURL: server.url, concurrency });
    const children = Array.from({ length: workers }, () =>
      spawn(
        process.execPath,
        [
          ...(process.env.BENCH_WORKER_PROF
            ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROF}`]
            : []),
          path.join(here, 'lib', 'postgres-bench-worker.mjs'),
          config,
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      ),
    );
    await Promise.all(children.map((c) => new Promise((r) => c.stdout.once('data', r))));
    const client = createSessionClient({ store: s, pollMs: 20 });
    const run = async (prefix, n) => {
      await Promise.all(Array.from({ length: n }, (_, i) => client.send(`${prefix}${i}`, 'go')));
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          client.waitFor(`${prefix}${i}`, { states: ['Completed'], timeoutMs: 300_000 }),
        ),
      );
    };
    // Warm-up, not timed: workers are long-lived processes, and a fresh one spends its first
    // sessions compiling (JIT); timing that would measure process start-up, 4 times over with 4.
    await run('warm', warmup * workers);
    sets.push({
      workers,
      children,
      clientCounts,
      clientPool,
      s,
      run,
      rates: [],
      wallMs: 0,
      cpu: { self: 0, pg: 0 },
      wal: { commits: 0, syncs: 0 },
    });
  }
  for (const set of sets) for (const c of set.children) c.kill('SIGUSR2');
  for (const set of sets) for (const key of Object.keys(set.clientCounts)) delete set.clientCounts[key];
  await new Promise((r) => setTimeout(r, 100));
  for (let round = 0; round < repeat; round++) {
    for (const set of sets) {
      const before = {
        wal: await walCounters(admin),
        pg: clusterCpuMs(cluster.dir),
        self: cpuMsOf(process.pid),
      };
      const t = performance.now();
      await set.run(`r${round}s`, sessions);
      const wallMs = performance.now() - t;
      const after = {
        wal: await walCounters(admin),
        pg: clusterCpuMs(cluster.dir),
        self: cpuMsOf(process.pid),
      };
      set.rates.push(sessions / (wallMs / 1000));
      set.wallMs += wallMs;
      set.cpu.self += after.self - before.self;
      set.cpu.pg += after.pg - before.pg;
      set.wal.commits += after.wal.commits - before.wal.commits;
      set.wal.syncs += after.wal.syncs - before.wal.syncs;
    }
  }
  for (const set of sets) {
    const { workers, children } = set;
    const timed = sessions * repeat;
    out.sessionsPerSecond[workers] = Math.round(pct(set.rates, 50) * 10) / 10;
    const reports = await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => {
            let text = '';
            c.stdout.on('data', (d) => {
              text += d;
            });
            c.once('exit', () => resolve(JSON.parse(text.trim().split('\n').at(-1) ?? '{}')));
            c.kill('SIGTERM');
          }),
      ),
    );
    const workerCpuMs = reports.reduce((a, r) => a + (r.cpuMs ?? 0), 0);
    const workerCounts = {};
    for (const r of reports)
      for (const [k, v] of Object.entries(r.counts ?? {})) workerCounts[k] = (workerCounts[k] ?? 0) + v;
    profile[`workers${workers}`] = {
      runs: set.rates.map((r) => Math.round(r * 10) / 10),
      wallMsPerRun: Math.round(set.wallMs / repeat),
      commitsPerSession: per(set.wal.commits, timed),
      walFlushesPerSession: per(set.wal.syncs, timed),
      workerStatementsPerSession: Object.fromEntries(
        Object.entries(workerCounts).map(([k, v]) => [k, per(v, timed)]),
      ),
      clientStatementsPerSession: Object.fromEntries(
        Object.entries(countsByKind(set.clientCounts)).map(([k, v]) => [k, per(v, timed)]),
      ),
      cpuMsPerSession: {
        workers: per(workerCpuMs, timed),
        serverAndClient: per(set.cpu.self, timed),
        postgres: per(set.cpu.pg, timed),
      },
      coresBusy: Math.round(((workerCpuMs + set.cpu.self + set.cpu.pg) / set.wallMs) * 100) / 100,
    };
    await set.s.close();
    await set.clientPool.end();
  }
  await admin.end();
  out.concurrency = concurrency ?? 'startWorker default';
  out.speedup4v1 = Math.round((out.sessionsPerSecond[4] / out.sessionsPerSecond[1]) * 100) / 100;
  await server.close();
} finally {
  await cluster.stop();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
if ('profile' in args) process.stdout.write(`${JSON.stringify(profile, null, 2)}\n`);
