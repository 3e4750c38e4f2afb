// What an agent's start costs (init36, issue 36): `createAgent` (no session store, no MCP, no skills),
// `await agent.ready()` (the machine in AwaitingInput) and `agent.stop()`, for one or more builds,
// interleaved block by block in one process (a seeded shuffle of the builds per round), this process's
// main-thread CPU read around each block (Linux schedstat). The fixed part of every session, a
// one-call session's largest, paid again by every session a durable engine starts. Prints per build
// the mean +- s.e. µs a start, and each build less the first (paired by round).
//   npm run build && node bench/agent-start-cost.mjs [--dists=<a>/dist,dist] [--rounds=200] [--block=50] [--warmup=20] [--seed=1] [--initialize]
// `--initialize`: the agents have an `initialize` option (it returns no messages).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { threadCpuMs } from './lib/process-cpu.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dists = (args.dists ?? path.join(here, '..', 'dist')).split(',').map((d) => path.resolve(d));
const rounds = Number(args.rounds ?? 200);
const block = Number(args.block ?? 50);
const warmup = Number(args.warmup ?? 20);
const shuffle = seededShuffle(Number(args.seed ?? 1));
const extra = args.initialize !== undefined ? { initialize: () => ({}) } : {};

const builds = [];
for (const dist of dists) {
  const m = await import(`${dist}/index.js`);
  let n = 0;
  builds.push({
    dist,
    samples: [],
    start: async () => {
      const agent = m.createAgent({ apiKey: 'bench-key', sessionId: `start.s${n++}`, ...extra });
      await agent.ready();
      if (agent.state !== 'AwaitingInput') throw new Error(`started in ${agent.state}`);
      agent.stop();
    },
  });
}

for (let round = 0; round < warmup + rounds; round++) {
  for (const build of shuffle(builds)) {
    const before = threadCpuMs();
    for (let i = 0; i < block; i++) await build.start();
    const us = ((threadCpuMs() - before) * 1000) / block;
    if (round >= warmup) build.samples.push(us);
  }
}

const fmt = (s) => `${s.mean.toFixed(1)} +- ${s.se.toFixed(1)}`;
console.log(
  `main-thread CPU µs an agent start (createAgent, ready, stop${extra.initialize ? ', with initialize' : ''}), ` +
    `mean +- s.e. of ${rounds} blocks of ${block} (warm-up ${warmup}), seed ${args.seed ?? 1}`,
);
for (const [k, build] of builds.entries())
  console.log(`build${k} (${build.dist}) ${fmt(meanSpread(build.samples))}`);
for (const [k, build] of builds.entries()) {
  if (k === 0) continue;
  const diff = build.samples.map((v, i) => v - builds[0].samples[i]);
  console.log(`build${k} - build0 ${fmt(meanSpread(diff))}`);
}
