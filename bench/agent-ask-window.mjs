// What the agent does between asking for a step and the step's closure starting, when the engine
// starts the closure on a later turn of the event loop, as Restate's SDK does (issue 36, rsplit36).
// No engine: each step's closure is started from a `setImmediate` after the ask (after every promise
// reaction, as the SDK's `do_progress` comes after a flush and a `setImmediate`), for the agent (its
// `durableSteps`) and for the hand-written loop (bench/lib/engine-shapes.mjs `handTurn`), one session of
// each in turn. In process the agent's work after the ask overlaps the model call's request; inside
// Restate all of it comes before the request goes out. Printed per shape: main-thread CPU a step from
// the ask to the closure's start (mean +- s.e.), and, from a CPU profile of those windows only (its
// samples whose time falls between an ask and its start), the functions that run there.
// npm run build && node bench/agent-ask-window.mjs [--sessions=40] [--shapes=text,batch,chain] [--top=25]
import { Session } from 'node:inspector/promises';
import { createAgent } from '../dist/index.js';
import { benchArgs } from './lib/engine-bench.mjs';
import {
  closeShapes,
  FINAL,
  handCompletes,
  handTurn,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { threadCpuMs } from './lib/process-cpu.mjs';
import { meanSpread } from './lib/stats.mjs';

const args = benchArgs();
const sessions = Number(args.sessions ?? 40);
const top = Number(args.top ?? 25);
const shapes = String(args.shapes ?? 'text,batch,chain').split(',');
const SHAPES = await startShapes();
const completes = handCompletes(SHAPES);

/** The windows being recorded: [asked, started] in µs of the monotonic clock, and the CPU of each. */
let windows;
const now = () => Number(process.hrtime.bigint() / 1000n);
/** A step runner whose closures start on a later turn of the event loop, recording each window. */
const deferred = (_name, run) => {
  const window = { from: now(), cpu: threadCpuMs() };
  windows?.push(window);
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      window.to = now();
      window.cpu = threadCpuMs() - window.cpu;
      run().then(resolve, reject);
    });
  });
};
const check = (r) => {
  if (r.response !== FINAL) throw new Error(`unexpected ${JSON.stringify(r)}`);
};
const modes = {
  agent: async (id) => {
    const agent = createAgent({
      ...shapeOptions(SHAPES, shapeOf(id)),
      sessionId: id.replace('~', '.'),
      durableSteps: { step: deferred },
    });
    check(await agent.send('go'));
    agent.stop();
  },
  hand: async (id) => check(await handTurn(completes[shapeOf(id)], deferred, (steps) => Promise.all(steps))),
};

const inspector = new Session();
inspector.connect();
await inspector.post('Profiler.enable');
await inspector.post('Profiler.setSamplingInterval', { interval: 50 });
let n = 0;
try {
  for (const shape of shapes) {
    for (let i = 0; i < 10; i++) for (const run of Object.values(modes)) await run(`${shape}~warm-${n++}`);
    const cpu = { agent: [], hand: [] };
    const all = { agent: [], hand: [] };
    await inspector.post('Profiler.start');
    for (let i = 0; i < sessions; i++) {
      const order = Object.entries(modes);
      for (const [mode, run] of i % 2 ? order.reverse() : order) {
        windows = [];
        await run(`${shape}~${mode}-${n++}`);
        cpu[mode].push(windows.reduce((a, w) => a + w.cpu, 0) / windows.length);
        all[mode].push(...windows);
        windows = undefined;
      }
    }
    const { profile } = await inspector.post('Profiler.stop');
    const steps = SHAPES[shape].steps;
    console.log(`\n== ${shape} (${steps} steps a session, ${sessions} sessions a mode)`);
    for (const mode of Object.keys(modes)) {
      const m = meanSpread(cpu[mode]);
      console.log(
        `  ${mode}: main-thread CPU from a step's ask to its closure's start ${m.mean.toFixed(3)} +- ${m.se.toFixed(3)} ms a step`,
      );
    }
    for (const mode of Object.keys(modes)) {
      console.log(`  -- ${mode}: self time in those windows, ms a step (sampled), by function`);
      console.log(inWindows(profile, all[mode], all[mode].length, top));
    }
  }
} finally {
  inspector.disconnect();
  await closeShapes(SHAPES);
}

/** The profile's self time in `list`'s windows, per function, ms per window. */
function inWindows(profile, list, count, limit) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const sorted = [...list].sort((a, b) => a.from - b.from);
  const fns = new Map();
  let t = profile.startTime;
  let w = 0;
  for (const [i, id] of profile.samples.entries()) {
    t += profile.timeDeltas[i] ?? 0;
    while (w < sorted.length && sorted[w].to < t) w++;
    if (w >= sorted.length) break;
    if (t < sorted[w].from) continue;
    const frame = byId.get(id).callFrame;
    if (frame.functionName === '(idle)') continue;
    const where = frame.url ? frame.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/') : '';
    const fn = `${frame.functionName || '(anon)'} ${where}${where ? `:${frame.lineNumber + 1}` : ''}`;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    fns.set(fn, (fns.get(fn) ?? 0) + dt);
  }
  return [...fns]
    .sort((x, y) => y[1] - x[1])
    .slice(0, limit)
    .map(([k, us]) => `    ${(us / 1000 / count).toFixed(4).padStart(8)} ms  ${k}`)
    .join('\n');
}
