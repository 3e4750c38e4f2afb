// Why a step costs more main-thread CPU when the steps are apart (wake36, issue 36). bench/engines.mjs's
// `seam-wait` (the agent on an in-memory durable seam, the thread left idle 2 ms after each step) costs
// 0.5-0.7 ms CPU a wait more than `in-process` in the chain shape, with no engine. This bench tells the
// possible causes apart, in one process, sessions interleaved (a seeded shuffle per round), this
// process's main-thread CPU read exactly around each session (Linux schedstat after a 1 us sleep; see
// exactCpuMs) and by ticks as engines.mjs reads it:
//   base          the step returns at once (for the agent: the seam with no wait; `in-process` is the
//                 agent with no seam at all)
//   turn          the step's outcome one event-loop turn later (`setImmediate`), no wait
//   idle-<ms>     the thread idle <ms> after each step (`setTimeout`: the event loop sleeps in epoll),
//                 as an engine's ack leaves it (engines.mjs `seam-wait`)
//   sleep-<ms>    the thread asleep <ms> without the event loop (`Atomics.wait`), then one turn: the
//                 thread off its CPU as long, but no timer and nothing run by the loop while it sleeps
//   busy-<ms>     the thread spinning <ms> (its CPU measured and taken off the session's), then one
//                 turn: as much wall time passes, the thread never leaves its CPU (on a loaded machine
//                 it is still preempted while it spins: read the involuntary switches)
//   churn-<ms>    as busy, but writing through `--churn-mb` (default 16) MB of memory as it spins: the
//                 caches emptied of the agent's code and data as another process would, the thread on
//                 its CPU
// Read each mode's extra against the time it keeps the thread away a step (the `away` column: its wall
// time a step over base; Node rounds a `setTimeout` below 1 ms up to 1 ms, and wakes come late on a
// loaded machine). If the extra follows the time away whatever the thread did meanwhile (asleep, or
// spinning), and more when it churned memory, and a CPU profile of `busy` shows every file slower
// rather than new functions, it is the step's code and data gone cold (bench/README.md, wake36: it
// was); work that comes with time (GC, timers, V8 tasks) would show as its own functions or GCs; the
// extra wake alone is `turn`.
// Steps running together (a batch's tool calls) wait alike, each its own wait.
// For each mode, per session: main-thread CPU (less the spin), GCs seen by a `gc` PerformanceObserver
// (count, and ms of pause on the main thread), voluntary / involuntary context switches of the main
// thread. Printed: mean +- s.e. per mode, and each mode's extra over its base paired session by session
// (per session and per wait).
//   npm run build && node bench/step-wait-cpu.mjs [--shape=chain] [--sessions=40] [--warmup=20] [--seed=1]
//     [--waits=0.1,0.5,2,10] [--kinds=idle,sleep,busy,churn] [--churn-mb=16] [--loops=agent,hand] [--dists=<a>/dist,dist]
//     [--json=<file>]
//   node --cpu-prof --cpu-prof-interval=100 bench/step-wait-cpu.mjs --profile=agent:base,agent:idle-2
//     --sessions=1000 --windows=/tmp/w.json   (those modes only, interleaved; then
//     node bench/lib/profile-window-diff.mjs <.cpuprofile> /tmp/w.json agent:base agent:idle-2)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  closeShapes,
  FINAL,
  handCompletes,
  handTurn,
  lookupTool,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { flagArgs } from './lib/flags.mjs';
import { threadCpuMs, threadSwitches } from './lib/process-cpu.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dists = (args.dists ?? path.join(here, '..', 'dist')).split(',').map((d) => path.resolve(d));
const shapeName = args.shape ?? 'chain';
const sessions = Number(args.sessions ?? 40);
const warmup = Number(args.warmup ?? 20);
const shuffle = seededShuffle(Number(args.seed ?? 1));
const waits = (args.waits ?? '0.1,0.5,2,10').split(',').map(Number);
const kinds = (args.kinds ?? 'idle,sleep,busy,churn').split(',');
const loops = (args.loops ?? 'agent,hand').split(',');
const profile = args.profile;

const SHAPES = await startShapes();
if (!SHAPES[shapeName]) throw new Error(`--shape must be one of ${Object.keys(SHAPES)}, got ${shapeName}`);
const completes = handCompletes(SHAPES);
const check = (response) => {
  if (response !== FINAL) throw new Error(`unexpected ${response}`);
};

/** The main thread's voluntary and involuntary context switches so far (zeros where there is no /proc). */
const switches = () => {
  const s = threadSwitches();
  return { v: s?.voluntary ?? 0, nv: s?.involuntary ?? 0 };
};

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/**
 * The main thread's CPU ms so far, exact: Linux updates a thread's schedstat when the thread leaves its
 * CPU or at a scheduler tick (every 4 ms here), so a reading while it runs lags by up to a tick, and by
 * less when the thread woke from a wait shortly before (the lag at a session's end then depends on the
 * mode: an idle mode's session ends a fraction of a tick after its last wake, a base session anywhere
 * in a tick, which read an idle mode's session up to ~2 ms dearer than it was). A 1 us sleep first makes
 * the thread leave its CPU, so the reading is up to date. Each session is read by ticks too (as
 * engines.mjs reads) to show what that reading makes of the same sessions.
 */
const exactCpuMs = () => {
  Atomics.wait(sleeper, 0, 0, 0.001);
  return threadCpuMs();
};

/**
 * The process's CPU ms since `from` (`process.cpuUsage()`): exact and one system call, where reading
 * the thread's schedstat would take the thread off its CPU (exactly) or lag by a tick, and would run
 * the file system's code between the steps (in a run until 05:50 it did, and `busy`'s and `churn`'s
 * short waits read 0.1-0.2 ms a step dearer for it). Taken off the session's CPU; the process's other
 * threads (GC helpers) mostly idle while the main thread spins.
 */
const cpuMsSince = (from) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};
/** CPU ms spent spinning in `busy` waits during the current session: taken off its CPU. */
let spun = 0;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
/** After-step waits by kind: each resolves when the step's outcome may be handed back. */
const WAITS = {
  none: () => undefined,
  turn: () => nextTurn(),
  idle: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  sleep: (ms) => {
    Atomics.wait(sleeper, 0, 0, ms);
    return nextTurn();
  },
  churn: (ms) => {
    const cpu = process.cpuUsage();
    churn(ms);
    spun += cpuMsSince(cpu);
    return nextTurn();
  },
  busy: (ms) => {
    const cpu = process.cpuUsage();
    spin(Math.round(ms * spinsPerMs));
    spun += cpuMsSince(cpu);
    return nextTurn();
  },
};
/**
 * Integer work `n` rounds, allocating nothing (a loop reading the clock allocated a number a round in
 * its first tier, and so ran the scavenger more often in `busy` than in any other mode).
 */
function spin(n) {
  let x = 1;
  for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  return x;
}
/** What `churn` walks: `--churn-mb` (default 16) MB, larger than a core's own caches. */
const churned = new Int32Array(((Number(args['churn-mb'] ?? 16) * 1024 * 1024) / 4) | 0);
let churnAt = 0;
/**
 * Writes a word of every 64-byte line of {@link churned}, on from where the last churn stopped, for
 * `ms` of wall time: as another process running on this CPU meanwhile would, it evicts this thread's
 * code and data from the caches, with the thread never leaving its CPU. The clock is read once every
 * 4,096 lines.
 */
function churn(ms) {
  const until = performance.now() + ms;
  const words = churned.length;
  do {
    for (let k = 0; k < 4096; k++) {
      churned[churnAt] = churned[churnAt] + 1;
      churnAt += 16;
      if (churnAt >= words) churnAt = 0;
    }
  } while (performance.now() < until);
}
/** Rounds of `spin` a CPU ms, calibrated at start (the median of a few tries, CPU read exactly). */
const spinsPerMs = (() => {
  const tries = [];
  for (let k = 0; k < 9; k++) {
    const n = 20_000_000;
    const cpu = exactCpuMs();
    spin(n);
    tries.push(n / (exactCpuMs() - cpu));
  }
  const rate = tries.sort((a, b) => a - b)[4];
  if (!(rate > 0 && Number.isFinite(rate))) throw new Error(`spin calibration failed: ${tries}`);
  return rate;
})();
/** A step runner that waits `kind` for `ms` after each step. */
const stepWith = (kind, ms) => async (run) => {
  const value = await run();
  const wait = WAITS[kind](ms);
  if (wait) await wait;
  return value;
};

/** The variants of wait: `[name, kind, ms]`. */
const variants = [
  ['base', 'none', 0],
  ['turn', 'turn', 0],
  ...kinds.flatMap((kind) => waits.map((ms) => [`${kind}-${ms}`, kind, ms])),
];

const modes = [];
for (const [k, dist] of dists.entries()) {
  if (!loops.includes('agent')) break;
  const m = await import(`${dist}/index.js`);
  const lookup = lookupTool(m.defineTool);
  const tag = dists.length > 1 ? `agent${k}` : 'agent';
  let n = 0;
  const agentRun = (durableSteps) => async () => {
    const agent = m.createAgent({
      ...shapeOptions(SHAPES, shapeName),
      tools: [lookup],
      sessionId: `${shapeName}.s${n++}`,
      durableSteps,
    });
    const result = await agent.send('look the values up');
    agent.stop();
    check(result.response);
  };
  modes.push({ name: `${tag}:in-process`, loop: tag, variant: 'in-process', run: agentRun(undefined) });
  for (const [name, kind, ms] of variants) {
    const step = stepWith(kind, ms);
    modes.push({
      name: `${tag}:${name}`,
      loop: tag,
      variant: name,
      ms,
      run: agentRun({ step: (_key, run) => step(run) }),
    });
  }
}
if (loops.includes('hand'))
  for (const [name, kind, ms] of variants) {
    const step = stepWith(kind, ms);
    modes.push({
      name: `hand:${name}`,
      loop: 'hand',
      variant: name,
      ms,
      run: async () =>
        check(
          (
            await handTurn(
              completes[shapeName],
              (_name, run) => step(run),
              (steps) => Promise.all(steps),
            )
          ).response,
        ),
    });
  }

/** GC entries seen, by start time (the observer reports them after the fact). */
const gcs = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ at: e.startTime, ms: e.duration, kind: e.detail?.kind });
}).observe({ entryTypes: ['gc'] });

if (profile) {
  // Modes for a CPU profile, interleaved: `--profile=agent:base,agent:idle-2`. With `--windows=<file>`,
  // each session's span as [mode, start us, end us] on the monotonic clock (the profile's), for
  // bench/lib/profile-window-diff.mjs.
  const chosen = profile.split(',').map((name) => {
    const mode = modes.find((x) => x.name === name);
    if (!mode) throw new Error(`--profile: no mode ${name} (${modes.map((x) => x.name)})`);
    return mode;
  });
  for (let i = 0; i < warmup; i++) for (const mode of shuffle(chosen)) await mode.run();
  const windows = [];
  const us = () => Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < sessions; i++)
    for (const mode of shuffle(chosen)) {
      const from = us();
      await mode.run();
      windows.push([mode.name, from, us()]);
    }
  if (args.windows) writeFileSync(args.windows, JSON.stringify(windows));
  console.log(`${profile}: ${sessions} sessions each`);
  await closeShapes(SHAPES);
  process.exit(0);
}

for (let i = 0; i < warmup; i++) for (const mode of shuffle(modes)) await mode.run();
const rows = new Map(modes.map((x) => [x.name, []]));
const start = new Date();
const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
for (let i = 0; i < sessions; i++) {
  if (i % 10 === 0) process.stderr.write(`round ${i}/${sessions}\n`);
  for (const mode of shuffle(modes)) {
    spun = 0;
    const s0 = switches();
    const from = performance.now();
    // Read both ways: by ticks as engines.mjs reads (`tick`), and exactly (`cpu`, see exactCpuMs).
    const tick0 = threadCpuMs();
    const cpu0 = exactCpuMs();
    await mode.run();
    const tick = threadCpuMs() - tick0;
    const cpu = exactCpuMs() - cpu0;
    const to = performance.now();
    const s1 = switches();
    rows.get(mode.name).push({
      cpu: cpu - spun,
      tick: tick - spun,
      spun,
      from,
      to,
      v: s1.v - s0.v,
      nv: s1.nv - s0.nv,
    });
  }
}
const load1 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
// Let the observer deliver the last entries, then give each GC to the session it started in.
await new Promise((resolve) => setTimeout(resolve, 50));
for (const list of rows.values())
  for (const row of list) {
    const mine = gcs.filter((g) => g.at >= row.from && g.at < row.to);
    row.gcs = mine.length;
    row.gcMs = mine.reduce((a, g) => a + g.ms, 0);
    row.major = mine.filter((g) => g.kind !== 1).length; // kind 1: minor (scavenge)
  }
await closeShapes(SHAPES);

const steps = SHAPES[shapeName].steps;
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const ms = (xs) => {
  const s = meanSpread(xs);
  return `${f(s.mean)} +- ${f(s.se)}`;
};
console.log(
  `step-wait-cpu: ${shapeName} (${steps} steps), ${sessions} sessions a mode interleaved, ${start.toISOString()} - ${new Date().toISOString()}, load ${load0} -> ${load1}`,
);
console.log(
  'mode | main CPU ms | extra over base | extra a step | away a step | read by ticks: extra over base | GCs (major) | GC ms | vol / invol switches',
);
const out = {};
for (const mode of modes) {
  const list = rows.get(mode.name);
  const base = rows.get(`${mode.loop}:base`);
  const extra = list.map((r, i) => r.cpu - base[i].cpu);
  const e = meanSpread(extra);
  const t = meanSpread(list.map((r, i) => r.tick - base[i].tick));
  out[mode.name] = { cpu: meanSpread(list.map((r) => r.cpu)), extra: e, tickExtra: t, rows: list };
  console.log(
    [
      mode.name,
      ms(list.map((r) => r.cpu)),
      `${f(e.mean)} +- ${f(e.se)}`,
      `${f((e.mean / steps) * 1000, 0)} +- ${f((e.se / steps) * 1000, 0)} us`,
      `${f(meanSpread(list.map((r, i) => r.to - r.from - (base[i].to - base[i].from))).mean / steps)} ms`,
      `${f(t.mean)} +- ${f(t.se)}`,
      `${f(meanSpread(list.map((r) => r.gcs)).mean)} (${f(meanSpread(list.map((r) => r.major)).mean)})`,
      f(meanSpread(list.map((r) => r.gcMs)).mean),
      `${f(meanSpread(list.map((r) => r.v)).mean, 1)} / ${f(meanSpread(list.map((r) => r.nv)).mean, 1)}`,
    ].join(' | '),
  );
}
if (args.json) writeFileSync(args.json, JSON.stringify(out));
// The agent's extra over the hand-written loop's for the same wait, round by round: what the waits add
// to the agent's part over the hand loop (engines.mjs: (engine - engine-hand) - (in-process - hand)).
const tags = [...new Set(modes.map((x) => x.loop))].filter((t) => t !== 'hand');
if (loops.includes('hand') && tags.length > 0) {
  console.log('agent extra - hand extra, same wait (ms a session, and a step; by ticks)');
  for (const tag of tags)
    for (const [name] of variants.slice(1)) {
      const a = out[`${tag}:${name}`]?.rows;
      const h = out[`hand:${name}`]?.rows;
      if (!a || !h) continue;
      const ab = out[`${tag}:base`].rows;
      const hb = out['hand:base'].rows;
      const d = meanSpread(a.map((r, i) => r.cpu - ab[i].cpu - (h[i].cpu - hb[i].cpu)));
      const t = meanSpread(a.map((r, i) => r.tick - ab[i].tick - (h[i].tick - hb[i].tick)));
      console.log(
        `${tag}:${name} | ${f(d.mean)} +- ${f(d.se)} | ${f((d.mean / steps) * 1000, 0)} +- ${f((d.se / steps) * 1000, 0)} us | ${f(t.mean)} +- ${f(t.se)}`,
      );
    }
}
