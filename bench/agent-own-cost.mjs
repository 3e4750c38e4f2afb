// agentloop's own CPU per model call, with the model and the tool answering at once (no network, no
// SDK): the bench's session (11 model calls, a new agent per session), two or more builds interleaved
// in one process (same heap, same JIT, the same load at the same moment), median over rounds.
//   npm run build && node --expose-gc bench/agent-own-cost.mjs [<before>/dist,dist] [sessions] [rounds]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOCUMENT, instantClient } from './lib/instant-task.mjs';
import { z } from './lib/root-deps.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const [dists = path.join(here, '..', 'dist'), sessions = '200', rounds = '8'] = process.argv.slice(2);
const builds = [];
for (const dist of dists.split(',').map((d) => path.resolve(d))) {
  const m = await import(`${dist}/index.js`);
  const tool = m.defineTool({
    name: 'lookup',
    description: 'd',
    parameters: z.object({ key: z.string() }),
    execute: () => DOCUMENT,
  });
  const options = {
    client: instantClient,
    model: 'gpt-4o-mini',
    instructions: 'sys',
    tools: [tool],
    stream: false,
    loopControlTools: false,
    planning: false,
    contextWindow: false,
  };
  const run = async () => {
    const agent = m.createAgent(options);
    const result = await agent.send('go');
    agent.stop();
    if (!result.success) throw new Error(String(result.error));
    return result.iterations;
  };
  builds.push({ dist, run, cpu: [] });
}
for (const build of builds) for (let i = 0; i < 50; i++) await build.run();
for (let r = 0; r < Number(rounds); r++) {
  for (const build of r % 2 ? builds : [...builds].reverse()) {
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    let calls = 0;
    for (let i = 0; i < Number(sessions); i++) calls += await build.run();
    const c = process.cpuUsage(c0);
    build.cpu.push(((c.user + c.system) / calls).toFixed(1) * 1);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const { dist, cpu } of builds) {
  const line = { dist, cpuMicrosPerCallMedian: median(cpu), min: Math.min(...cpu), max: Math.max(...cpu) };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
