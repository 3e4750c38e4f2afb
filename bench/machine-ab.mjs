// The machine alone, between builds (xs36, 2026-11-29): `agentMachine` with the instant effects of
// bench/lib/instant-task.mjs (the model and the tool answer at once: 11 model calls, 10 tool calls a
// session), so a session is the statechart, XState and the effect actors, without the SDK, HTTP or
// the tools. Builds interleaved in rounds (the order alternating), this process's main-thread CPU read
// around each round (Linux schedstat); prints us per model call (with its tool call) per build and the
// paired difference of the second minus the first. Steadier than agent-step-cpu.mjs on a loaded
// machine for changes in src/machines (s.e. ~3-5% of a call at load 5-8, against ~2% of a session).
//   npm run build && node bench/machine-ab.mjs --dists=<main copy>/dist,dist [--rounds=40] [--sessions=100]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { CALLS, runMachineSession } from './lib/instant-task.mjs';
import { threadCpuMs } from './lib/process-cpu.mjs';
import { meanSpread } from './lib/stats.mjs';

const args = flagArgs();
const dists = (args.dists ?? 'dist').split(',');
const rounds = Number(args.rounds ?? 40);
const perRound = Number(args.sessions ?? 100);

const builds = [];
for (const dist of dists) {
  const m = await import(pathToFileURL(path.resolve(dist, 'index.js')).href);
  builds.push(() => runMachineSession(m));
}
for (const run of builds) for (let i = 0; i < 300; i++) await run();
const samples = builds.map(() => []);
for (let r = 0; r < rounds; r++) {
  const order = builds.map((_, k) => k);
  if (r % 2) order.reverse();
  for (const k of order) {
    const c0 = threadCpuMs();
    for (let i = 0; i < perRound; i++) await builds[k]();
    samples[k].push(((threadCpuMs() - c0) / perRound / CALLS) * 1000);
  }
}
const r = (x) => x.toFixed(2);
for (const [k, dist] of dists.entries()) {
  const { mean, se } = meanSpread(samples[k]);
  process.stdout.write(`${dist}: ${r(mean)} +- ${r(se)} us a model call (and its tool call)\n`);
}
for (let k = 1; k < builds.length; k++) {
  const { mean, se } = meanSpread(samples[k].map((x, i) => x - samples[0][i]));
  process.stdout.write(`${dists[k]} - ${dists[0]}: ${r(mean)} +- ${r(se)} us a call (paired by round)\n`);
}
