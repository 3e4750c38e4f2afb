// Durable engines (issue 36): what a model call and a tool step cost when a turn runs on Restate or
// DBOS, next to the same agent in process and on the built-in PostgreSQL workers, in one run.
// Three session shapes, so that a model call and a tool step can be told apart (ms per session =
// fixed + model calls x m + tool calls x t, solved per mode):
//   text     one model call, a text answer                         (1 model call, 0 tool calls)
//   batch    one model call asking for 5 lookups at once, a final  (2 model calls, 5 tool calls)
//   chain    5 model calls asking for one lookup each, a final     (6 model calls, 5 tool calls)
// Modes, each `sessions` sessions of each shape one after another (medians of `repeat` runs after a
// warm-up):
//   in-process   createAgent, no engine, no store (nothing persisted)
//   in-process-pg  createAgent on a PostgresSessionStore on the same cluster (fsync on): the agent in
//                process persisting its session, as the engine modes persist theirs
//   seam         the same agent with an in-memory DurableSteps (a Map): the adapter's own CPU cost
//   seam-wait    the seam with the main thread left idle `--seam-wait-ms` (default 2) after each step,
//                as an engine's ack leaves it: the agent's own CPU when its steps are apart, no engine
//   hand-wait    the hand-written loop (`hand`) with seam-wait's waits: what they cost it
//   pg-workers   the built-in workers: startWorker on a PostgresSessionStore, createSessionClient
//                send + waitFor (fsync on, the worker in this process)
//   restate      restateAgent on restate-server 1.7 (the endpoint in this process, send through the
//                ingress, which waits)
//   dbos         dbosAgent on DBOS 5 (queue and result polled every `dbos-poll-ms`, default 50)
//   dbos-b       with `--dbos-b=<dist>`: the dbosAgent of another build, same DBOS (before/after)
//   restate-b    with `--restate-b=<dist>`: the restateAgent of another build, same restate-server and
//                endpoint (before/after; that build must resolve this `@restatedev/restate-sdk`)
//   restate-bare / dbos-bare   the engine alone: a handler / workflow taking the adapter's turn's
//                steps in the turn's shape (`ctx.run` / `DBOS.runStep`: initialize, then each model
//                call in sequence, a batch's marker, the batch's tool steps started together; records
//                of about the adapter's sizes; bench/lib/engine-shapes.mjs `BARE_PLANS`), no agent. The
//                engine's own round trips: what is left of (engine - in-process - bare) is the adapter's.
//                dbos-bare's queue has the adapter's settings (partitioned by session id, one at a time,
//                the same poll), and both wait for the result with the same call.
//   hand / restate-hand / dbos-hand   the hand-written loop with no agentloop (the `openai` SDK, a
//                step per model call and per tool call): in process, and on each engine, where its
//                steps do the agent's I/O, sending the agent's own request bodies (its tools, the
//                same task; checked byte for byte at start-up); the adapter's part against it is
//                (engine - engine-hand) - (in-process - hand).
//                restate-hand keeps its messages in the object's state (a `get` at the start, a
//                `set` at the end), as a loop that takes a session's next turn must (since rest36d).
//                dbos-hand runs on dbos-bare's queue; it keeps its session's messages in a table
//                (read at its start, saved at its end, as the adapter keeps its snapshot: two
//                statements, written as the adapter's are; dbos36d)
//   dbos-hand-nostate   dbos-hand keeping no session state (the baseline until dbos36d), to read
//                what keeping it costs the hand-written loop
//   restate-agent  the agent on bare Restate `ctx.run` steps with no adapter (rsplit36,
//                bench/lib/restate-agent-object.mjs: its snapshot kept in the object's state as
//                restate-hand keeps its messages; no view, `turn` entry, mirror, approval or interrupt
//                loop; steps asked together awaited together): restate - restate-agent is the adapter's own
//                part, (restate-agent - restate-hand) - (in-process - hand) the agent's own inside Restate
//   restate-agent-w   restate-agent with the adapter's two state writes (the `turn` entry at the
//                start, the view at the end; object `agentw`): restate-agent-w - restate-agent is what
//                they cost, restate - restate-agent-w the rest of the adapter's own part (writes36)
//   dbos-agent   the agent on bare DBOS steps with no adapter (its snapshot kept as dbos-hand keeps its
//                messages; no view, interrupt watch or turn loop): dbos - dbos-agent is the adapter's
//                own part, (dbos-agent - dbos-hand) - (in-process - hand) the agent's own inside DBOS
// Printed per mode and shape: the median of `repeat` rounds' means, and the mean of every session with
// its standard error; the adapter's part both ways (by the mean: session by session when interleaved).
// All modes share one PostgreSQL cluster (fsync on) and the model servers, in this process.
// Modes run one after another by default; `--interleave` runs one session of each mode in turn
// (pg-workers apart), so that a shared machine's changing load weighs on each mode alike, in an order
// shuffled afresh for every round of sessions (`--order=shuffle`, the default, seeded by `--seed`, so
// that no mode always comes first or always follows the same mode: a fixed rotation put `restate`
// right after `in-process` every time, and the first Restate mode of the rotation paid more, rest36),
// or rotated by one a round (`--order=rotate`, the order before 2026-11-29).
// With `--interleave` this process's CPU is read around every session too (the endpoint and the agent
// run in it), and the adapter's part is printed in CPU ms beside the wall figure: less moved than wall
// time by a shared machine's load. The main thread's sleeps a session (voluntary context switches)
// are printed too: on a busy machine each costs the step after it 0.3-0.77 ms of CPU (its caches
// refilled; bench/README.md, wake36), so two modes that sleep alike pay alike.
// npm run build && node bench/engines.mjs [--sessions=10] [--repeat=3] [--dbos-poll-ms=50] [--interleave]
//   [--order=shuffle|rotate] [--seed=1] [--warmup=3]
//   [--dbos-b=<another build's dist>] [--dbos-a=<a build's dist>] [--restate-b=<another build's dist>]
//   [--dbos-interrupt-poll-ms=<ms>] [--dbos-b-interrupt-poll-ms=<ms>]
//   [--restate-a=<a build's dist>]
//   [--only=in-process,in-process-pg,seam,seam-wait,hand-wait,pg-workers,restate,restate-bare,restate-hand,restate-agent,restate-agent-w,dbos,dbos-bare,hand,dbos-hand,dbos-hand-nostate,dbos-agent]
import path from 'node:path';
import { createAgent, createSessionClient, startWorker } from '../dist/index.js';
import { PostgresSessionStore } from '../dist/postgres/index.js';
import { benchArgs, onlyOf, startBenchCluster } from './lib/engine-bench.mjs';
import {
  bareRestateObject,
  closeShapes,
  enqueueBareDbos,
  FINAL,
  handCompletes,
  handRestateObject,
  handTurn,
  registerAgentDbosWorkflow,
  registerBareDbosQueue,
  registerBareDbosWorkflow,
  registerHandDbosWorkflow,
  sendBareRestate,
  serveRestateEndpoint,
  shapeOf,
  shapeOptions,
  startShapes,
  TASK,
} from './lib/engine-shapes.mjs';
import { clusterCpuMs, processCpuMsFine, threadCpuMs, threadSwitches } from './lib/process-cpu.mjs';
import { agentRestateObject } from './lib/restate-agent-object.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const sessions = Number(args.sessions ?? 10);
const repeat = Number(args.repeat ?? 3);
/**
 * Sessions of each mode run unmeasured before each shape's (default 3). The first shape measured
 * (text) also pays the tiering-up of code the warm-up left cold, in every mode: with few warm-up
 * sessions its in-process and bare sessions cost as much CPU as a batch's, which makes text's part
 * read low (below zero in CPU).
 */
const warmup = Number(args.warmup ?? 3);
const only = onlyOf(args, 'in-process,in-process-pg,seam,pg-workers,restate,restate-bare,dbos,dbos-bare');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 100) / 100;

/** The shapes (bench/lib/engine-shapes.mjs): their model servers, model calls, tool calls, steps. */
const SHAPES = await startShapes();
const agentOptions = (shape) => () => shapeOptions(SHAPES, shape);
const routedOptions = (id) => shapeOptions(SHAPES, shapeOf(id));
/** The hand-written loop's model call per shape (modes `hand`, `restate-hand`). */
const completes = handCompletes(SHAPES);

/**
 * CPU ms used so far by this process (all its threads), its main thread (where the agent, the
 * endpoint and the SDKs run: `main`, from Linux's schedstat, without V8's compiler and GC helper
 * threads; the whole process where there is no schedstat), restate-server (every thread, schedstat)
 * and the PostgreSQL cluster (10 ms ticks), once started.
 */
const cpuPids = { restate: undefined, cluster: undefined };
/** This process's CPU: cheap to read (two calls). */
const ownCpu = () => {
  const usage = process.cpuUsage();
  const node = (usage.user + usage.system) / 1000;
  return { node, main: threadCpuMs() ?? node };
};
/**
 * The engines' processes' CPU: dear to read (restate-server's threads, and every process under /proc
 * for the cluster's: a few ms of this process's CPU), so a session's own CPU is read inside these
 * reads, never around them (until 2026-11-29 each interleaved session's CPU held one scan of /proc,
 * which made the adapter's part, engine - in-process - bare, read that scan's cost too low).
 */
const othersCpu = () => ({
  restate: cpuPids.restate ? processCpuMsFine(cpuPids.restate) : 0,
  postgres: cpuPids.cluster ? clusterCpuMs(cpuPids.cluster) : 0,
});
const cpuNow = () => ({ ...othersCpu(), ...ownCpu() });
/** CPU ms per session of the measured runs, by process, per mode and shape (less moved by the load than wall time). */
const cpu = {};
/**
 * Every measured session's ms, in the order run, per mode and shape: the means and their spread are
 * read from these (a DBOS session is rounded up to its polls, so its median moves by whole intervals).
 */
const samples = {};
const sample = (mode, shape, ms) => {
  samples[mode] ??= {};
  samples[mode][shape] ??= [];
  samples[mode][shape].push(ms);
};
/** With `--interleave`, every measured session's CPU ms of this process's main thread, per mode and shape. */
const cpuSamples = {};
const cpuSample = (mode, shape, ms) => {
  cpuSamples[mode] ??= {};
  cpuSamples[mode][shape] ??= [];
  cpuSamples[mode][shape].push(ms);
};
/**
 * With `--interleave`, every measured session's sleeps of the main thread (voluntary context switches),
 * per mode and shape: each costs the next step its caches' contents on a busy machine (bench/README.md,
 * wake36), so a mode that sleeps more a session pays more CPU for the same work.
 */
const sleepSamples = {};
const sleepSample = (mode, shape, n) => {
  sleepSamples[mode] ??= {};
  sleepSamples[mode][shape] ??= [];
  sleepSamples[mode][shape].push(n);
};
/** The order of the modes in each round of interleaved sessions (`--order`, `--seed`). */
const order = args.order ?? 'shuffle';
if (order !== 'shuffle' && order !== 'rotate')
  throw new Error(`--order must be shuffle or rotate, got ${order}`);
const shuffle = seededShuffle(Number(args.seed ?? 1));
/** The modes in the order of round `i`: shuffled (seeded, so that a run's orders can be run again) or rotated by `i`. */
const roundOrder = (modes, i) => {
  if (order === 'rotate') return modes.map((_, k) => modes[(i + k) % modes.length]);
  return shuffle(modes);
};

/** Runs `runSession(id)` for `sessions` sessions, `repeat` times after a warm-up; ms per session (median). */
async function measure(name, shape, runSession) {
  let n = 0;
  for (let i = 0; i < warmup; i++) await runSession(`${shape}~${name}-warm-${n++}`);
  const runs = [];
  const before = cpuNow();
  for (let r = 0; r < repeat; r++) {
    const start = performance.now();
    for (let i = 0; i < sessions; i++) {
      const one = performance.now();
      await runSession(`${shape}~${name}-${r}-${n++}`);
      sample(name, shape, performance.now() - one);
    }
    runs.push((performance.now() - start) / sessions);
  }
  const after = cpuNow();
  cpu[name] ??= {};
  cpu[name][shape] = Object.fromEntries(
    Object.keys(after).map((k) => [k, round((after[k] - before[k]) / (sessions * repeat))]),
  );
  return round(median(runs));
}
/** ms per session of each shape in one mode. */
async function measureShapes(name, runSession) {
  const out = {};
  for (const shape of Object.keys(SHAPES)) out[shape] = await measure(name, shape, runSession);
  return out;
}
/**
 * `--interleave`: the modes' sessions in turns (one session of each mode, in a rotating order), so that
 * the machine's load, which moves by 2x over minutes when it is shared, weighs on every mode alike;
 * per mode and shape the median over `repeat` rounds of the mean ms per session, and CPU as above
 * (read around each session). pg-workers is measured on its own either way (a worker per shape).
 */
async function measureInterleaved(modes) {
  if (modes.length === 0) return;
  for (const shape of Object.keys(SHAPES)) {
    let n = 0;
    for (let i = 0; i < warmup; i++)
      for (const m of modes) await m.runSession(`${shape}~${m.tag}-warm-${n++}`);
    const runs = new Map(modes.map((m) => [m, []]));
    const spent = new Map(modes.map((m) => [m, { node: 0, main: 0, restate: 0, postgres: 0 }]));
    for (let r = 0; r < repeat; r++) {
      const total = new Map(modes.map((m) => [m, 0]));
      for (let i = 0; i < sessions; i++) {
        for (const m of roundOrder(modes, i)) {
          const slept = threadSwitches()?.voluntary;
          const before = { ...othersCpu(), ...ownCpu() };
          const start = performance.now();
          await m.runSession(`${shape}~${m.tag}-${r}-${n++}`);
          const ms = performance.now() - start;
          const after = { ...ownCpu(), ...othersCpu() };
          sample(m.mode, shape, ms);
          total.set(m, total.get(m) + ms);
          for (const key of Object.keys(after)) spent.get(m)[key] += after[key] - before[key];
          cpuSample(m.mode, shape, after.main - before.main);
          sleepSample(m.mode, shape, (threadSwitches()?.voluntary ?? Number.NaN) - slept);
        }
      }
      for (const m of modes) runs.get(m).push(total.get(m) / sessions);
    }
    for (const m of modes) {
      results[m.mode] ??= {};
      results[m.mode][shape] = round(median(runs.get(m)));
      cpu[m.tag] ??= {};
      cpu[m.tag][shape] = Object.fromEntries(
        Object.entries(spent.get(m)).map(([k, v]) => [k, round(v / (sessions * repeat))]),
      );
    }
  }
}
// A flag given alone is a key with an undefined value (benchArgs): look for the key. (Until
// 2026-11-28 21:05 this read the value, so `--interleave` was ignored and every mode ran on its own.)
const interleave = 'interleave' in args;
/** Modes set up and waiting to be measured together (`--interleave`). */
const deferred = [];
/** What runs once every mode was measured (DBOS's dequeue-to-end times). */
const measured = [];
/** Measures a mode now, or, with `--interleave`, with the others once all are set up. */
async function use(mode, tag, runSession) {
  if (interleave) deferred.push({ mode, tag, runSession });
  else {
    results[mode] = await measureShapes(tag, runSession);
    samples[mode] = samples[tag];
  }
}
const check = (result) => {
  if (result.response !== FINAL) throw new Error(`unexpected ${result.response}`);
};
/** Session ids must be lower case with no `~` for the stores: the shape goes first, before a dot. */
const storeId = (id) => id.replace('~', '.');

const results = {};
const closers = [];
// JIT warm-up for every mode: the first mode measured would pay it otherwise.
await measureShapes('jit', async (id) => {
  const agent = createAgent({ ...routedOptions(id), sessionId: storeId(id) });
  check(await agent.send(TASK));
  agent.stop();
});
const pg = (await import('pg')).default;
const bench = await startBenchCluster();
cpuPids.cluster = bench.cluster.dir;
closers.push(bench.stop);
const createDatabase = bench.database;
try {
  if (only.has('in-process')) {
    await use('in-process', 'inproc', async (id) => {
      const agent = createAgent({ ...routedOptions(id), sessionId: storeId(id) });
      check(await agent.send(TASK));
      agent.stop();
    });
  }
  if (only.has('hand')) {
    // The hand-written loop in process: the base of `restate-hand` (bench/lib/engine-shapes.mjs).
    await use('hand', 'hand', async (id) =>
      check(
        await handTurn(
          completes[shapeOf(id)],
          (_name, run) => run(),
          (steps) => Promise.all(steps),
        ),
      ),
    );
  }
  if (only.has('in-process-pg')) {
    const store = new PostgresSessionStore(
      { connectionString: await createDatabase('bench_inproc'), max: 4 },
      { schema: 'bench_inproc' },
    );
    await store.migrate();
    closers.push(() => store.close());
    await use('in-process-pg', 'inpg', async (id) => {
      const agent = createAgent({ ...routedOptions(id), store, session: storeId(id) });
      check(await agent.send(TASK));
      await agent.flush();
      agent.stop();
    });
  }
  if (only.has('seam')) {
    await use('seam', 'seam', async (id) => {
      const recorded = new Map();
      const steps = {
        step: async (key, run) => {
          if (recorded.has(key)) return recorded.get(key);
          const value = await run();
          recorded.set(key, value);
          return value;
        },
      };
      const agent = createAgent({ ...routedOptions(id), sessionId: storeId(id), durableSteps: steps });
      check(await agent.send(TASK));
      agent.stop();
    });
  }
  if (only.has('seam-wait')) {
    // The seam with the thread left idle after each step (`--seam-wait-ms`, default 2: about an
    // engine's ack): what the same agent's CPU becomes when its steps are apart, as on an engine, with
    // no engine (the wait itself takes no CPU; its wall is in this mode's wall). Steps running
    // together (a batch's tool calls) end 1 ms apart, one a wake, as an engine's acks hand them over
    // one a wait (rest36); with `--seam-wait-together` they end together.
    const waitMs = Number(args['seam-wait-ms'] ?? 2);
    const together = 'seam-wait-together' in args;
    await use('seam-wait', 'seamwait', async (id) => {
      let running = 0;
      const steps = {
        step: async (_key, run) => {
          const place = running++;
          const value = await run();
          await new Promise((resolve) => setTimeout(resolve, waitMs + (together ? 0 : place)));
          running--;
          return value;
        },
      };
      const agent = createAgent({ ...routedOptions(id), sessionId: storeId(id), durableSteps: steps });
      check(await agent.send(TASK));
      agent.stop();
    });
  }
  if (only.has('hand-wait')) {
    // The hand-written loop with `seam-wait`'s waits (each step's value handed back `--seam-wait-ms`
    // later, steps running together 1 ms apart unless `--seam-wait-together`): what the same idle waits
    // cost the loop with no agentloop, so that `seam-wait - hand-wait` is the agent's own over the
    // hand loop with its steps apart (wake36: the two pay about alike, bench/README.md), to set beside
    // the agent's own part inside DBOS, `(dbos-agent - dbos-hand) - (in-process - hand)` (dbosgap36).
    const waitMs = Number(args['seam-wait-ms'] ?? 2);
    const together = 'seam-wait-together' in args;
    await use('hand-wait', 'handwait', async (id) => {
      let running = 0;
      const step = async (_name, run) => {
        const place = running++;
        const value = await run();
        await new Promise((resolve) => setTimeout(resolve, waitMs + (together ? 0 : place)));
        running--;
        return value;
      };
      check(await handTurn(completes[shapeOf(id)], step, (steps) => Promise.all(steps)));
    });
  }
  if (only.has('pg-workers')) {
    // A worker (and a schema) per shape: a worker's agent options come before it knows the session.
    const url = await createDatabase('bench_workers');
    results['pg-workers'] = {};
    for (const shape of Object.keys(SHAPES)) {
      const store = new PostgresSessionStore({ connectionString: url, max: 8 }, { schema: `bench_${shape}` });
      await store.migrate();
      const worker = startWorker({ store, concurrency: 4, pollMs: 50, agent: agentOptions(shape) });
      const client = createSessionClient({ store });
      try {
        results['pg-workers'][shape] = await measure('pgw', shape, async (id) => {
          const sid = storeId(id);
          await client.send(sid, TASK);
          const view = await client.waitFor(sid, { states: ['Completed', 'Error'], timeoutMs: 60_000 });
          if (view.state !== 'Completed') throw new Error(`session ${sid} ended ${view.state}`);
        });
      } finally {
        await worker.stop();
        await store.close();
      }
    }
  }
  if (
    ['restate', 'restate-bare', 'restate-bare-io', 'restate-hand', 'restate-agent', 'restate-agent-w'].some(
      (m) => only.has(m),
    )
  ) {
    // `--restate-a=<dist>`: mode `restate` from another build's dist instead of this one's (with
    // `--restate-b`, two builds swapped between runs: each its own copy of agentloop's modules).
    const { restateAgent, restateClient } = await import(
      args['restate-a']
        ? path.resolve(args['restate-a'], 'engines/restate/index.js')
        : '../dist/engines/restate/index.js'
    );
    const sdk = await import('@restatedev/restate-sdk');
    const { startRestateServer } = await import('../test/support/restate-server.mjs');
    const server = await startRestateServer();
    cpuPids.restate = server.pid;
    closers.push(server.stop);
    // The engine alone: the agent's turn's `ctx.run` steps in the turn's shape (BARE_PLANS).
    // `--restate-b=<dist>`: the Restate adapter of another build too (mode `restate-b`, object
    // `benchb`, the same server and endpoint): before/after in one process.
    const restateB = args['restate-b']
      ? await import(path.resolve(args['restate-b'], 'engines/restate/index.js'))
      : undefined;
    const endpoint = await serveRestateEndpoint(sdk, server, [
      restateAgent('bench', (id) => routedOptions(id)),
      ...(restateB ? [restateB.restateAgent('benchb', (id) => routedOptions(id))] : []),
      bareRestateObject(sdk),
      bareRestateObject(sdk, { name: 'bareio', yieldFirst: true }),
      handRestateObject(sdk, completes),
      agentRestateObject(sdk, SHAPES),
      agentRestateObject(sdk, SHAPES, { name: 'agentw', writes: true }),
    ]);
    closers.push(endpoint.close);
    if (only.has('restate')) {
      const client = restateClient({ url: server.ingress, agent: 'bench' });
      await use('restate', 'restate', async (id) => check(await client.send(id, TASK)));
    }
    if (restateB) {
      const client = restateB.restateClient({ url: server.ingress, agent: 'benchb' });
      await use('restate-b', 'restateb', async (id) => check(await client.send(id, TASK)));
    }
    if (only.has('restate-bare')) {
      await use('restate-bare', 'bare', async (id) =>
        check(await sendBareRestate(server.ingress, id, shapeOf(id))),
      );
    }
    if (only.has('restate-hand')) {
      await use('restate-hand', 'rhand', async (id) =>
        check(await sendBareRestate(server.ingress, id, shapeOf(id), 'hand')),
      );
    }
    if (only.has('restate-agent')) {
      await use('restate-agent', 'ragent', async (id) =>
        check(await sendBareRestate(server.ingress, id, shapeOf(id), 'agent')),
      );
    }
    if (only.has('restate-agent-w')) {
      await use('restate-agent-w', 'ragentw', async (id) =>
        check(await sendBareRestate(server.ingress, id, shapeOf(id), 'agentw')),
      );
    }
    if (only.has('restate-bare-io')) {
      await use('restate-bare-io', 'bareio', async (id) =>
        check(await sendBareRestate(server.ingress, id, shapeOf(id), 'bareio')),
      );
    }
  }
  if (['dbos', 'dbos-bare', 'dbos-hand', 'dbos-hand-nostate', 'dbos-agent'].some((m) => only.has(m))) {
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    // `--dbos-a=<dist>`: mode `dbos` from another build's dist instead of this one's (with `--dbos-b`,
    // the two builds swap places between runs: a mode's place in the rotation has a bias of its own).
    const { dbosAgent } = await import(
      args['dbos-a'] ? path.resolve(args['dbos-a'], 'engines/dbos/index.js') : '../dist/engines/dbos/index.js'
    );
    const url = await createDatabase('bench_dbos');
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    closers.push(() => pool.end());
    const pollMs = Number(args['dbos-poll-ms'] ?? 50);
    // `--dbos-interrupt-poll-ms=<n>`: the adapter's interrupt watch polls this often (default 250 ms).
    const agent = dbosAgent('bench', (id) => routedOptions(id), {
      pool,
      queuePollMs: pollMs,
      ...(args['dbos-interrupt-poll-ms'] ? { interruptPollMs: Number(args['dbos-interrupt-poll-ms']) } : {}),
    });
    // `--dbos-b=<dist>`: the DBOS adapter of another build too (mode `dbos-b`, its own agent name and
    // queue, the same DBOS): before/after in one process. That build must resolve this
    // `@dbos-inc/dbos-sdk` (link its node_modules/@dbos-inc here).
    const agentB = args['dbos-b']
      ? (await import(path.resolve(args['dbos-b'], 'engines/dbos/index.js'))).dbosAgent(
          'benchb',
          (id) => routedOptions(id),
          {
            pool,
            queuePollMs: pollMs,
            // `--dbos-b-interrupt-poll-ms=<n>`: B's interrupt watch polls this often (the same build
            // as both A and B, with a long poll, reads what the watch's polls cost a session).
            ...(args['dbos-b-interrupt-poll-ms']
              ? { interruptPollMs: Number(args['dbos-b-interrupt-poll-ms']) }
              : {}),
          },
        )
      : undefined;
    // The engine alone: a workflow on a queue taking the agent's turn's steps in its shape (BARE_PLANS).
    const bare = registerBareDbosWorkflow(DBOS);
    const hand = registerHandDbosWorkflow(DBOS, completes, { pool });
    const handNoState = registerHandDbosWorkflow(DBOS, completes, { name: 'bench.hand-nostate' });
    const agentWf = registerAgentDbosWorkflow(DBOS, SHAPES, { pool });
    DBOS.setConfig({ name: 'agentloop-bench', systemDatabaseUrl: url, logLevel: 'error' });
    await DBOS.launch();
    closers.push(() => DBOS.shutdown());
    await agent.start();
    await agentB?.start();
    // The bare workflow's queue has the adapter's settings: partitioned by session id, one at a time.
    await registerBareDbosQueue(DBOS, pollMs);
    // Each turn's workflow id, to read from DBOS's records how long it ran once dequeued: the engine's
    // time without the queue's and the result's polling, which round a session up to `pollMs`.
    const workflows = {
      dbos: [],
      'dbos-b': [],
      'dbos-bare': [],
      'dbos-hand': [],
      'dbos-hand-nostate': [],
      'dbos-agent': [],
    };
    if (only.has('dbos')) {
      await use('dbos', 'dbos', async (id) => {
        const workflowId = await agent.post(id, TASK);
        workflows.dbos.push({ id, workflowId });
        check(await DBOS.retrieveWorkflow(workflowId).getResult({ pollingIntervalMs: pollMs }));
      });
    }
    if (agentB) {
      await use('dbos-b', 'dbosb', async (id) => {
        const workflowId = await agentB.post(id, TASK);
        workflows['dbos-b'].push({ id, workflowId });
        check(await DBOS.retrieveWorkflow(workflowId).getResult({ pollingIntervalMs: pollMs }));
      });
    }
    // The workflows enqueued by hand, each waited for with the adapter's modes' call for the result.
    for (const [mode, tag, workflow] of [
      ['dbos-bare', 'dbosbare', bare],
      ['dbos-hand', 'dboshand', hand],
      ['dbos-hand-nostate', 'dboshand0', handNoState],
      ['dbos-agent', 'dbosagent', agentWf],
    ]) {
      if (!only.has(mode)) continue;
      await use(mode, tag, async (id) => {
        const workflowId = await enqueueBareDbos(DBOS, workflow, id, shapeOf(id));
        workflows[mode].push({ id, workflowId });
        check(await DBOS.retrieveWorkflow(workflowId).getResult({ pollingIntervalMs: pollMs }));
      });
    }
    // Once measured (interleaved: after every mode's sessions ran).
    measured.push(async () => {
      for (const [mode, runs] of Object.entries(workflows)) {
        if (runs.length === 0) continue;
        const { rows } = await pool.query(
          'SELECT workflow_uuid AS id, updated_at - started_at_epoch_ms AS ms FROM dbos.workflow_status WHERE workflow_uuid = ANY($1)',
          [runs.map((r) => r.workflowId)],
        );
        const ms = new Map(rows.map((r) => [r.id, Number(r.ms)]));
        results[`${mode}-run`] = {};
        for (const shape of Object.keys(SHAPES)) {
          const times = runs
            .filter((r) => shapeOf(r.id) === shape && !r.id.includes('-warm-'))
            .map((r) => ms.get(r.workflowId));
          results[`${mode}-run`][shape] = round(median(times));
          for (const t of times) sample(`${mode}-run`, shape, t);
        }
      }
    });
  }
  if (interleave) await measureInterleaved(deferred);
  for (const done of measured) await done();
} finally {
  for (const close of closers.reverse()) await close().catch(() => {});
  await closeShapes(SHAPES);
}

/** Per mode: fixed ms per session, ms per model call, ms per tool step (from the three shapes). */
const split = ({ text, batch, chain }) => {
  const model = (chain - batch) / 4;
  const tool = (batch - text - model) / 5;
  return { fixed: round(text - model), model: round(model), tool: round(tool) };
};
console.log(
  `ms per session (${sessions} sessions x ${repeat}, median; ${interleave ? 'modes interleaved, one session of each in turn' : 'one mode after another'}), and the split per model call / tool step:`,
);
const base = results['in-process'] && split(results['in-process']);
for (const [mode, shapes] of Object.entries(results)) {
  const parts = split(shapes);
  const over = base
    ? `; over in-process: model +${round(parts.model - base.model)}, tool +${round(parts.tool - base.tool)}, fixed +${round(parts.fixed - base.fixed)}`
    : '';
  console.log(
    `  ${mode.padEnd(12)} text ${shapes.text}, batch ${shapes.batch}, chain ${shapes.chain} | fixed ${parts.fixed}, model ${parts.model}, tool ${parts.tool}${over}`,
  );
}
// The adapter's part: what the engine mode costs beyond the agent in process and the engine alone;
// against the agent with no store, and against the agent persisting its session on PostgreSQL.
// `dbos-run`: the same from DBOS's records, dequeue to end (no polling). Printed as a share of the
// engine mode's time (the issue's "agentloop's part over it", read against the whole session) and
// against the bare engine's time alone (the stricter reading).
for (const [engine, full, bare] of [
  ['restate', results.restate, results['restate-bare']],
  ['restate-b', results['restate-b'], results['restate-bare']],
  ['restate (bare-io)', results.restate, results['restate-bare-io']],
  ['dbos', results.dbos, results['dbos-bare']],
  ['dbos-run', results['dbos-run'], results['dbos-bare-run']],
  ['dbos-b', results['dbos-b'], results['dbos-bare']],
  ['dbos-b-run', results['dbos-b-run'], results['dbos-bare-run']],
]) {
  if (!full || !bare) continue;
  for (const base of ['in-process', 'in-process-pg']) {
    const inproc = results[base];
    if (!inproc) continue;
    for (const shape of Object.keys(SHAPES)) {
      const adapter = full[shape] - inproc[shape] - bare[shape];
      console.log(
        `  ${engine} ${shape} (over ${base}): adapter's part ${round(adapter)} ms of ${full[shape]} ms (${round((adapter / full[shape]) * 100)}%; ${round((adapter / bare[shape]) * 100)}% of the bare engine's ${bare[shape]} ms)`,
      );
    }
  }
}
// Against the hand-written loop on the same engine (`restate-hand`, whose steps do the same I/O as
// the agent's, where the bare engine's return at once): the adapter's part is what the agent on
// Restate costs over the hand-written loop on Restate, less what the agent costs over the
// hand-written loop in process: (restate - restate-hand) - (in-process - hand).
for (const [engine, handMode] of [
  ['restate', 'restate-hand'],
  ['dbos', 'dbos-hand'],
  ['dbos-run', 'dbos-hand-run'],
  ['dbos-b', 'dbos-hand'],
  ['dbos', 'dbos-hand-nostate'],
  ['dbos-run', 'dbos-hand-nostate-run'],
  ['dbos-agent', 'dbos-hand'],
  ['restate-agent', 'restate-hand'],
]) {
  if (!results[engine] || !results[handMode] || !results['in-process'] || !results.hand) continue;
  for (const shape of Object.keys(SHAPES)) {
    const part =
      results[engine][shape] -
      results[handMode][shape] -
      (results['in-process'][shape] - results.hand[shape]);
    console.log(
      `  ${engine} ${shape} (over ${handMode}, less in-process over hand): ${engine === 'dbos-agent' ? "the agent's own part inside DBOS" : engine === 'restate-agent' ? "the agent's own part inside Restate" : "adapter's part"} ${round(part)} ms of ${results[engine][shape]} ms (${round((part / results[engine][shape]) * 100)}%)`,
    );
  }
}
// The same by the mean of every session, with its standard error: a DBOS session is rounded up to its
// queue's and its result's polls (`--dbos-poll-ms`), so its median (and a median of a few rounds)
// moves by whole intervals, where the mean moves by the time itself and its error shrinks with the
// sessions. Interleaved, session k of each mode ran in the same rotation, so the part is taken session
// by session (engine - base - bare of the k-th sessions) and its error from those differences.
console.log(
  `by the mean of ${sessions * repeat} sessions a mode (+- one standard error; ${interleave ? 'paired session by session' : 'unpaired'}):`,
);
for (const [mode, shapes] of Object.entries(samples)) {
  if (!results[mode]) continue;
  const cells = Object.entries(shapes).map(([shape, xs]) => {
    const m = meanSpread(xs);
    return `${shape} ${round(m.mean)} +- ${round(m.se)} (sd ${round(m.sd)})`;
  });
  console.log(`  ${mode.padEnd(14)} ${cells.join(', ')}`);
}
if (interleave) {
  console.log("the main thread's sleeps a session (voluntary context switches, mean +- s.e.):");
  for (const [mode, shapes] of Object.entries(sleepSamples)) {
    const cells = Object.entries(shapes).map(([shape, xs]) => {
      const m = meanSpread(xs);
      return `${shape} ${round(m.mean)} +- ${round(m.se)}`;
    });
    console.log(`  ${mode.padEnd(14)} ${cells.join(', ')}`);
  }
  // The agent's own main-thread CPU over the hand loop's with the same waits, beside the same with no
  // waits: how much dearer the waits make the agent's own work (wake36: about nothing).
  const [apart, handApart, inproc, hand] = ['seam-wait', 'hand-wait', 'in-process', 'hand'].map(
    (m) => cpuSamples[m],
  );
  if (apart && handApart && inproc && hand) {
    console.log("the agent's own main-thread CPU over the hand loop's, ms a session, paired:");
    for (const shape of Object.keys(SHAPES)) {
      const waits = meanSpread(apart[shape].map((x, k) => x - handApart[shape][k]));
      const none = meanSpread(inproc[shape].map((x, k) => x - hand[shape][k]));
      const more = meanSpread(
        apart[shape].map((x, k) => x - handApart[shape][k] - (inproc[shape][k] - hand[shape][k])),
      );
      console.log(
        `  ${shape}: seam-wait - hand-wait ${round(waits.mean)} +- ${round(waits.se)}; in-process - hand ${round(none.mean)} +- ${round(none.se)}; the waits add ${round(more.mean)} +- ${round(more.se)}`,
      );
    }
  }
}
const meanParts = {};
/** The adapter's part in CPU ms of this process, per engine and shape (interleaved runs). */
const cpuParts = {};
for (const [engine, bareMode] of [
  ['restate', 'restate-bare'],
  ['restate-b', 'restate-bare'],
  ['restate', 'restate-bare-io'],
  ['dbos', 'dbos-bare'],
  ['dbos-run', 'dbos-bare-run'],
  ['dbos-b', 'dbos-bare'],
  ['dbos-b-run', 'dbos-bare-run'],
]) {
  if (!samples[engine] || !samples[bareMode]) continue;
  for (const base of ['in-process', 'in-process-pg']) {
    if (!samples[base]) continue;
    for (const shape of Object.keys(SHAPES)) {
      const [full, inproc, bare] = [engine, base, bareMode].map((m) => samples[m][shape] ?? []);
      const n = Math.min(full.length, inproc.length, bare.length);
      const f = meanSpread(full);
      const b = meanSpread(bare);
      const i = meanSpread(inproc);
      const part = f.mean - i.mean - b.mean;
      const se =
        interleave && n === full.length && n === bare.length && n === inproc.length
          ? meanSpread(full.map((x, k) => x - inproc[k] - bare[k])).se
          : Math.sqrt(f.se ** 2 + i.se ** 2 + b.se ** 2);
      const share = (part / f.mean) * 100;
      const shareSe = (se / f.mean) * 100;
      meanParts[`${engine} over ${base}`] ??= {};
      meanParts[`${engine} over ${base}`][shape] = {
        ms: round(part),
        se: round(se),
        share: round(share),
        shareSe: round(shareSe),
      };
      console.log(
        `  ${engine} ${shape} (over ${base}): adapter's part ${round(part)} +- ${round(se)} ms of ${round(f.mean)} ms (${round(share)}% +- ${round(shareSe)}%)`,
      );
    }
  }
}
// The adapter's part in CPU ms of this process's main thread (interleaved runs): engine - in-process - bare, session
// by session, as the wall figure above; beside it restate-server's CPU over the bare engine's (the
// engine's side of what the adapter asks, from the per-mode sums).
if (interleave) {
  console.log(
    `the adapter's part in CPU ms of this process's main thread (mean of ${sessions * repeat} sessions, paired):`,
  );
  for (const [engine, bareMode, engineTag, bareTag] of [
    ['restate', 'restate-bare', 'restate', 'bare'],
    ['restate-b', 'restate-bare', 'restateb', 'bare'],
    ['dbos', 'dbos-bare', 'dbos', 'dbosbare'],
    ['dbos-b', 'dbos-bare', 'dbosb', 'dbosbare'],
  ]) {
    if (!cpuSamples[engine] || !cpuSamples[bareMode] || !cpuSamples['in-process']) continue;
    for (const shape of Object.keys(SHAPES)) {
      const [full, inproc, bare] = [engine, 'in-process', bareMode].map((m) => cpuSamples[m][shape] ?? []);
      const f = meanSpread(full);
      const part = meanSpread(full.map((x, k) => x - inproc[k] - bare[k]));
      // Over the agent whose steps are apart (`seam-wait`): what is left once the agent's own dearer
      // CPU after each idle wait (which any engine's round trips cause) is taken off as well.
      const apart = cpuSamples['seam-wait']?.[shape];
      const overApart = apart
        ? `; over seam-wait ${round(meanSpread(full.map((x, k) => x - apart[k] - bare[k])).mean)} +- ${round(meanSpread(full.map((x, k) => x - apart[k] - bare[k])).se)} ms`
        : '';
      const wall = meanParts[`${engine} over in-process`]?.[shape];
      // The engine's own process: restate-server, or PostgreSQL under DBOS.
      const [own, ownName] = engine.startsWith('dbos')
        ? ['postgres', 'PostgreSQL']
        : ['restate', 'restate-server'];
      const serverPart =
        cpu[engineTag]?.[shape] && cpu[bareTag]?.[shape]
          ? `; ${ownName} over bare ${round(cpu[engineTag][shape][own] - cpu[bareTag][shape][own])} ms`
          : '';
      cpuParts[`${engine} over in-process`] ??= {};
      cpuParts[`${engine} over in-process`][shape] = {
        ms: round(part.mean),
        se: round(part.se),
        share: round((part.mean / f.mean) * 100),
      };
      console.log(
        `  ${engine} ${shape}: CPU ${round(part.mean)} +- ${round(part.se)} ms of ${round(f.mean)} ms (${round((part.mean / f.mean) * 100)}% +- ${round((part.se / f.mean) * 100)}%)${overApart}${wall ? `; wall ${wall.ms} +- ${wall.se} ms (${wall.share}% +- ${wall.shareSe}%)` : ''}${serverPart}`,
      );
    }
  }
}
// Two builds in one interleaved run (`--restate-b`, `--dbos-b`): the first less the second, session by
// session (wall and this process's CPU), the before/after reading with no bare engine or in-process
// subtracted (so with their noise left out).
if (interleave) {
  for (const [a, b] of [
    ['restate', 'restate-b'],
    ['dbos', 'dbos-b'],
    ['dbos', 'dbos-agent'],
    ['restate', 'restate-agent'],
    ['restate-b', 'restate-agent'],
    ['restate-agent-w', 'restate-agent'],
    ['restate', 'restate-agent-w'],
  ]) {
    if (!samples[a] || !samples[b]) continue;
    const cells = Object.keys(SHAPES).map((shape) => {
      const wall = meanSpread(samples[a][shape].map((x, k) => x - samples[b][shape][k]));
      const used = meanSpread(cpuSamples[a][shape].map((x, k) => x - cpuSamples[b][shape][k]));
      return `${shape} wall ${round(wall.mean)} +- ${round(wall.se)}, CPU ${round(used.mean)} +- ${round(used.se)}`;
    });
    const what =
      a === 'restate-agent-w'
        ? " (the adapter's two state writes: turn entry, view)"
        : b === 'restate-agent-w'
          ? " (the adapter's own part less its state writes: driver and turn loop)"
          : b === 'dbos-agent'
            ? " (the adapter's own part: view, interrupt watch, turn loop)"
            : b === 'restate-agent'
              ? " (the adapter's own part: view, turn entry, driver and turn loop)"
              : '';
    console.log(`${a} less ${b}${what}, ms a session (paired): ${cells.join('; ')}`);
  }
}
// The agent's own part in main-thread CPU, inside DBOS and with its steps apart and no engine (dbosgap36):
// (dbos-agent - dbos-hand) - (in-process - hand) beside (seam-wait - hand-wait) - (in-process - hand),
// and the agent over the hand-written loop alone in each setting, session by session.
if (interleave) {
  const c = (mode, shape) => cpuSamples[mode]?.[shape];
  for (const [name, agentMode, handMode] of [
    ['inside DBOS', 'dbos-agent', 'dbos-hand'],
    ['steps apart, no engine', 'seam-wait', 'hand-wait'],
    ['in process', 'in-process', 'hand'],
  ]) {
    if (!Object.keys(SHAPES).every((s) => c(agentMode, s) && c(handMode, s))) continue;
    const cells = Object.keys(SHAPES).map((shape) => {
      const over = meanSpread(c(agentMode, shape).map((x, k) => x - c(handMode, shape)[k]));
      const base =
        agentMode !== 'in-process' && c('in-process', shape) && c('hand', shape)
          ? meanSpread(
              c(agentMode, shape).map(
                (x, k) => x - c(handMode, shape)[k] - (c('in-process', shape)[k] - c('hand', shape)[k]),
              ),
            )
          : undefined;
      return `${shape} ${round(over.mean)} +- ${round(over.se)}${base ? ` (less in process: ${round(base.mean)} +- ${round(base.se)})` : ''}`;
    });
    console.log(
      `the agent over the hand-written loop, ${name} (${agentMode} - ${handMode}), main-thread CPU ms a session (paired): ${cells.join('; ')}`,
    );
  }
}
// Against the hand-written loop by the mean: (engine - engine-hand) - (in-process - hand), session by
// session when interleaved.
for (const [engine, handMode] of [
  ['restate', 'restate-hand'],
  ['dbos', 'dbos-hand'],
  ['dbos-run', 'dbos-hand-run'],
  ['dbos-b', 'dbos-hand'],
  ['dbos', 'dbos-hand-nostate'],
  ['dbos-run', 'dbos-hand-nostate-run'],
  ['dbos-agent', 'dbos-hand'],
  ['restate-agent', 'restate-hand'],
]) {
  if (!samples[engine] || !samples[handMode] || !samples['in-process'] || !samples.hand) continue;
  for (const shape of Object.keys(SHAPES)) {
    const [full, engineHand, inproc, hand] = [engine, handMode, 'in-process', 'hand'].map(
      (m) => samples[m][shape] ?? [],
    );
    const n = Math.min(full.length, engineHand.length, inproc.length, hand.length);
    const parts = full.slice(0, n).map((x, k) => x - engineHand[k] - (inproc[k] - hand[k]));
    const m = meanSpread(parts);
    const f = meanSpread(full);
    const key = `${engine} over ${handMode}`;
    meanParts[key] ??= {};
    meanParts[key][shape] = { ms: round(m.mean), se: round(m.se), share: round((m.mean / f.mean) * 100) };
    console.log(
      `  ${engine} ${shape} (over ${handMode}, less in-process over hand): ${engine === 'dbos-agent' ? "the agent's own part inside DBOS" : engine === 'restate-agent' ? "the agent's own part inside Restate" : "adapter's part"} ${round(m.mean)} +- ${round(m.se)} ms of ${round(f.mean)} ms (${round((m.mean / f.mean) * 100)}% +- ${round((m.se / f.mean) * 100)}%)`,
    );
  }
}
// The Restate split in this process's main-thread CPU (rsplit36), session by session: the adapter's own
// part (restate - restate-agent) and the agent's own inside Restate, (restate-agent - restate-hand) -
// (in-process - hand); and the whole part over the fair loop, (restate - restate-hand) - (in-process - hand).
if (interleave && cpuSamples['restate-agent'] && cpuSamples['restate-hand'] && cpuSamples.hand) {
  console.log('the Restate split in main-thread CPU, ms a session (mean +- s.e., paired):');
  for (const [label, plus, minus] of [
    ["adapter's own (restate - restate-agent)", ['restate'], ['restate-agent']],
    [
      "agent's own inside Restate ((restate-agent - restate-hand) - (in-process - hand))",
      ['restate-agent', 'hand'],
      ['restate-hand', 'in-process'],
    ],
    [
      'whole part ((restate - restate-hand) - (in-process - hand))',
      ['restate', 'hand'],
      ['restate-hand', 'in-process'],
    ],
  ]) {
    if (![...plus, ...minus].every((m) => cpuSamples[m])) continue;
    const cells = Object.keys(SHAPES).map((shape) => {
      const sum = (modes, k) => modes.reduce((a, m) => a + cpuSamples[m][shape][k], 0);
      const xs = cpuSamples[plus[0]][shape].map((_, k) => sum(plus, k) - sum(minus, k));
      const d = meanSpread(xs);
      return `${shape} ${round(d.mean)} +- ${round(d.se)}`;
    });
    console.log(`  ${label}: ${cells.join(', ')}`);
  }
}
console.log('CPU ms per session (this process / its main thread / restate-server / PostgreSQL):');
for (const [mode, shapes] of Object.entries(cpu)) {
  if (mode === 'jit') continue;
  const cells = Object.entries(shapes).map(
    ([shape, c]) => `${shape} ${c.node}/${c.main}/${c.restate}/${c.postgres}`,
  );
  console.log(`  ${mode.padEnd(12)} ${cells.join(', ')}`);
}
console.log(JSON.stringify({ results, cpu, meanParts, cpuParts }));
