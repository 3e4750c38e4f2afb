// What a Restate session costs the endpoint's process in wakes and awaits (issue 36, rsplit36): the
// adapter (`restate`), the agent on bare `ctx.run` steps with none of the adapter (`agent`,
// bench/lib/restate-agent-object.mjs) and the hand-written loop keeping its messages (`hand`), one
// session of each in turn, counted per session (means):
//   wakes      callbacks the event loop ran, by kind (async_hooks `before` of every resource that is not
//              a promise: `Immediate` for setImmediate, `HTTP2STREAM`/`HTTP2SESSION` for the stream's
//              reads, `Timeout`, `TickObject` for process.nextTick), and how many of them the loop entered
//              from nothing on the stack, next ticks and microtasks left out (`loop wakes`: the thread's
//              wakes proper, a poll or check phase's callback)
//   sdk        the SDK's awaits of Restate promises (`doProgress`: one per await made), its VM rounds
//              (`do_progress`, each after a `setImmediate`), the `ctx.run` closures it started
//   steps      per session, summed over its `ctx.run` steps (the SDK's `run` wrapped): from a step asked
//              for to its closure started (`ask>start`, wall and main-thread CPU), the closure's own time
//              (`closure`: the model call or the tool), from a closure's end to the next step asked
//              (`end>next ask`: the journal's ack and the machine's reaction), from the session's start
//              to the first step asked (`first ask`), and from the last closure's end to the answer
//   cpu        this process's main-thread CPU a session (schedstat), and wall: both with async_hooks on
//              (promise hooks make promise-heavy code dearer: read bench/engines.mjs for CPU)
// With `--no-hooks` the callbacks are not counted (no async_hooks: the steps' times and CPU as they are).
// npm run build && node bench/restate-wakes.mjs [--sessions=20] [--shapes=text,batch,chain] [--no-hooks]
//   [--modes=restate,agent,hand,inproc,inhand] [--b=<another build's dist>] (mode `restate-b`: that
//   build's adapter; `inproc`, `inhand`: the agent and the hand-written loop in process, steps marked alike)
import { createHook } from 'node:async_hooks';
import path from 'node:path';
import { createAgent } from '../dist/index.js';
import { benchArgs } from './lib/engine-bench.mjs';
import {
  closeShapes,
  FINAL,
  handCompletes,
  handRestateObject,
  handTurn,
  sendBareRestate,
  serveRestateEndpoint,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { threadCpuMs } from './lib/process-cpu.mjs';
import { agentRestateObject } from './lib/restate-agent-object.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const sessions = Number(args.sessions ?? 20);
const shapes = String(args.shapes ?? 'text,batch,chain').split(',');
const modes = String(args.modes ?? 'restate,agent,hand').split(',');
if (args.b) modes.push('restate-b');
const sdk = await import('@restatedev/restate-sdk');
const { startRestateServer } = await import('../test/support/restate-server.mjs');
const { restateAgent, restateClient } = await import('../dist/engines/restate/index.js');
const restateB = args.b ? await import(path.resolve(args.b, 'engines/restate/index.js')) : undefined;

/** The counts of the session being measured (undefined between sessions). */
let counts;
const count = (what) => {
  if (counts) counts[what] = (counts[what] ?? 0) + 1;
};
// The SDK's awaits and VM rounds: its PromisesExecutor, from the module the SDK itself loads.
const sdkPromises = await import(
  path.resolve(path.dirname(new URL(import.meta.resolve('@restatedev/restate-sdk')).pathname), 'promises.js')
);
const executor = sdkPromises.PromisesExecutor.prototype;
const doProgress = executor.doProgress;
executor.doProgress = function (promise) {
  count('sdk awaits');
  if (!this.coreVm.__counted) {
    const vm = this.coreVm;
    const progress = vm.do_progress.bind(vm);
    vm.do_progress = (future) => {
      count('sdk VM rounds');
      const result = progress(future);
      if (typeof result === 'object' && result && 'ExecuteRun' in result) count('sdk closures started');
      return result;
    };
    vm.__counted = true;
  }
  return doProgress.call(this, promise);
};
// Each `ctx.run` step's marks: asked (with main-thread CPU), closure started (with CPU), closure ended.
const contextImpl = await import(
  path.resolve(
    path.dirname(new URL(import.meta.resolve('@restatedev/restate-sdk')).pathname),
    'context_impl.js',
  )
);
let steps;
const ctxRun = contextImpl.ContextImpl.prototype.run;
contextImpl.ContextImpl.prototype.run = function (name, action, options) {
  if (!steps || typeof name !== 'string' || typeof action !== 'function')
    return ctxRun.call(this, name, action, options);
  const step = { ask: performance.now(), askCpu: threadCpuMs() };
  steps.push(step);
  return ctxRun.call(
    this,
    name,
    async () => {
      step.start = performance.now();
      step.startCpu = threadCpuMs();
      try {
        return await action();
      } finally {
        step.end = performance.now();
      }
    },
    options,
  );
};
/** A session's step sums from its marks (steps replayed, with no closure run, are left out). */
function stepSums(list, t0, t1) {
  const ran = list.filter((s) => s.start !== undefined);
  const sum = (f) => ran.reduce((a, s) => a + f(s), 0);
  const ends = ran.map((s) => s.end).sort((a, b) => a - b);
  const asks = list.map((s) => s.ask).sort((a, b) => a - b);
  // Each ask after the first: from the latest closure end before it (the outcome it reacts to).
  let gaps = 0;
  for (const ask of asks.slice(1)) {
    const before = ends.filter((e) => e <= ask).at(-1);
    if (before !== undefined) gaps += ask - before;
  }
  return {
    'step ask>start ms': sum((s) => s.start - s.ask),
    'step ask>start CPU': sum((s) => s.startCpu - s.askCpu),
    'step closure ms': sum((s) => s.end - s.start),
    'step end>next ask ms': gaps,
    'step first ask ms': asks.length ? asks[0] - t0 : 0,
    'step last end>answer ms': ends.length ? t1 - ends.at(-1) : 0,
  };
}
// The event loop's callbacks by kind, and those entered with nothing below them (the thread's wakes).
const hooks = !('no-hooks' in args);
let depth = 0;
const depthHook = createHook({
  init() {},
  before(_id) {
    depth++;
  },
  after() {
    depth--;
  },
});
const kinds = new Map();
const kindHook = createHook({
  init(id, type) {
    if (type !== 'PROMISE') kinds.set(id, type);
  },
  before(id) {
    const type = kinds.get(id);
    if (!type) return;
    count(`cb ${type}`);
    if (depth === 1 && type !== 'TickObject' && type !== 'Microtask') count('loop wakes');
  },
  destroy(id) {
    kinds.delete(id);
  },
});
if (hooks) {
  depthHook.enable();
  kindHook.enable();
}

const SHAPES = await startShapes();
const completes = handCompletes(SHAPES);
const server = await startRestateServer();
const endpoint = await serveRestateEndpoint(sdk, server, [
  restateAgent('bench', (id) => shapeOptions(SHAPES, shapeOf(id))),
  ...(restateB ? [restateB.restateAgent('benchb', (id) => shapeOptions(SHAPES, shapeOf(id)))] : []),
  agentRestateObject(sdk, SHAPES),
  handRestateObject(sdk, completes),
]);
const client = restateClient({ url: server.ingress, agent: 'bench' });
const clientB = restateB?.restateClient({ url: server.ingress, agent: 'benchb' });
const check = (r) => {
  if (r.response !== FINAL) throw new Error(`unexpected ${JSON.stringify(r)}`);
};
const run = {
  restate: (id) => client.send(id, 'go').then(check),
  'restate-b': (id) => clientB.send(id, 'go').then(check),
  agent: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'agent').then(check),
  hand: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'hand').then(check),
};
/**
 * Modes `inproc` and `inhand` (with `--modes=...`): the agent and the hand-written loop in process, each
 * step marked as the SDK's `run` is above (asked, started at once, ended), so that the per-step sums
 * read the same way with no engine: what the agent costs over the loop before its first ask and after
 * its last step, in process against inside Restate.
 */
const marked = (_name, action) => {
  if (!steps) return action();
  const step = { ask: performance.now(), askCpu: threadCpuMs() };
  steps.push(step);
  step.start = performance.now();
  step.startCpu = threadCpuMs();
  return action().finally(() => {
    step.end = performance.now();
  });
};
run.inproc = async (id) => {
  const agent = createAgent({
    ...shapeOptions(SHAPES, shapeOf(id)),
    sessionId: id.replace('~', '.'),
    durableSteps: { step: marked },
  });
  check(await agent.send('go'));
  agent.stop();
};
run.inhand = async (id) => check(await handTurn(completes[shapeOf(id)], marked, (all) => Promise.all(all)));
const shuffle = seededShuffle(Number(args.seed ?? 1));
const samples = {};
let n = 0;
try {
  for (const shape of shapes) {
    for (let i = 0; i < 5; i++) for (const m of modes) await run[m](`${shape}~${m}-warm-${n++}`);
    for (let i = 0; i < sessions; i++) {
      for (const m of shuffle(modes)) {
        counts = {};
        steps = [];
        const cpu0 = threadCpuMs();
        const t0 = performance.now();
        await run[m](`${shape}~${m}-${n++}`);
        const t1 = performance.now();
        const wall = t1 - t0;
        const cpu = threadCpuMs() - cpu0;
        const c = { ...counts, ...stepSums(steps, t0, t1) };
        counts = undefined;
        steps = undefined;
        c.wall = wall;
        c['main CPU'] = cpu;
        samples[m] ??= {};
        samples[m][shape] ??= [];
        samples[m][shape].push(c);
      }
    }
  }
} finally {
  await endpoint.close();
  await server.stop();
  await closeShapes(SHAPES);
}
const round = (x) => Math.round(x * 100) / 100;
console.log(`per session, mean of ${sessions} (one session of each mode in turn, shuffled):`);
for (const shape of shapes) {
  const keys = [...new Set(modes.flatMap((m) => samples[m][shape].flatMap((c) => Object.keys(c))))].sort();
  console.log(`${shape}: ${modes.join(' / ')}`);
  for (const key of keys) {
    const cells = modes.map((m) => {
      const s = meanSpread(samples[m][shape].map((c) => c[key] ?? 0));
      return key === 'wall' || key.includes('CPU') || key.includes(' ms')
        ? `${round(s.mean)} +- ${round(s.se)}`
        : `${round(s.mean)}`;
    });
    console.log(`  ${key.padEnd(24)} ${cells.join(' / ')}`);
  }
}
