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
//   cpu        this process's main-thread CPU a session (schedstat), and wall: both with async_hooks on
//              (promise hooks make promise-heavy code dearer: read bench/engines.mjs for CPU)
// npm run build && node bench/restate-wakes.mjs [--sessions=20] [--shapes=text,batch,chain]
//   [--modes=restate,agent,hand] [--b=<another build's dist>] (mode `restate-b`: that build's adapter)
import { createHook } from 'node:async_hooks';
import path from 'node:path';
import { benchArgs } from './lib/engine-bench.mjs';
import {
  closeShapes,
  FINAL,
  handCompletes,
  handRestateObject,
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
// The event loop's callbacks by kind, and those entered with nothing below them (the thread's wakes).
let depth = 0;
createHook({
  init() {},
  before(_id) {
    depth++;
  },
  after() {
    depth--;
  },
}).enable();
const kinds = new Map();
createHook({
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
}).enable();

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
const shuffle = seededShuffle(Number(args.seed ?? 1));
const samples = {};
let n = 0;
try {
  for (const shape of shapes) {
    for (let i = 0; i < 5; i++) for (const m of modes) await run[m](`${shape}~${m}-warm-${n++}`);
    for (let i = 0; i < sessions; i++) {
      for (const m of shuffle(modes)) {
        counts = {};
        const cpu0 = threadCpuMs();
        const t0 = performance.now();
        await run[m](`${shape}~${m}-${n++}`);
        const wall = performance.now() - t0;
        const cpu = threadCpuMs() - cpu0;
        const c = counts;
        counts = undefined;
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
      return key === 'wall' || key === 'main CPU' ? `${round(s.mean)} +- ${round(s.se)}` : `${round(s.mean)}`;
    });
    console.log(`  ${key.padEnd(24)} ${cells.join(' / ')}`);
  }
}
