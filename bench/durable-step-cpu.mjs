// Issue 36: agentloop's own CPU per turn on the engine seam, without an engine: the bench shapes'
// turns (bench/lib/engine-shapes.mjs) with every effect a durable step recorded as DBOS records it
// (the outcome as JSON text, serialized and read back: JSON.stringify, then the text copied through
// JSON once more, as SuperJSON does with a string, and parsed), against the same agent with no steps.
// CPU time of this process per turn (user + system), so the machine's load moves it less than wall
// time; with `--b=<dist>` another build's agent too, turns of the two interleaved (before/after).
// npm run build && node bench/durable-step-cpu.mjs [--turns=40] [--rounds=5] [--b=<other dist>]
import path from 'node:path';
import { benchArgs } from './lib/engine-bench.mjs';
import { closeShapes, FINAL, shapeOptions, startShapes } from './lib/engine-shapes.mjs';

const args = benchArgs();
const turns = Number(args.turns ?? 40);
const rounds = Number(args.rounds ?? 5);
const builds = { a: await import('../dist/index.js') };
if (args.b) builds.b = await import(path.resolve(args.b, 'index.js'));
const SHAPES = await startShapes();

/** Durable steps kept in memory, each recorded as DBOS records a step (text, through JSON twice). */
const recordingSteps = () => ({
  step: async (_key, run) => {
    const text = JSON.stringify(await run());
    const stored = JSON.stringify({ json: text });
    return JSON.parse(JSON.parse(stored).json);
  },
});
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const modes = Object.entries(builds).flatMap(([b, lib]) => [
  { name: `${b} durable`, lib, steps: true },
  { name: `${b} plain`, lib, steps: false },
]);
let n = 0;
const one = async (mode, shape) => {
  const agent = mode.lib.createAgent({
    ...shapeOptions(SHAPES, shape),
    sessionId: `${shape}.${n++}`,
    ...(mode.steps ? { durableSteps: recordingSteps() } : {}),
  });
  const result = await agent.send('look the values up');
  if (result.response !== FINAL) throw new Error(`unexpected ${result.response}`);
  agent.stop();
};
const out = {};
try {
  for (const shape of Object.keys(SHAPES)) {
    for (const mode of modes) for (let i = 0; i < 5; i++) await one(mode, shape);
    const per = new Map(modes.map((m) => [m.name, []]));
    for (let r = 0; r < rounds; r++) {
      const spent = new Map(modes.map((m) => [m.name, 0]));
      for (let i = 0; i < turns; i++) {
        for (let k = 0; k < modes.length; k++) {
          const mode = modes[(i + k) % modes.length];
          const before = cpuMs();
          await one(mode, shape);
          spent.set(mode.name, spent.get(mode.name) + cpuMs() - before);
        }
      }
      for (const m of modes) per.get(m.name).push(spent.get(m.name) / turns);
    }
    out[shape] = Object.fromEntries(
      modes.map((m) => [m.name, Math.round(median(per.get(m.name)) * 1000) / 1000]),
    );
  }
} finally {
  await closeShapes(SHAPES);
}
console.log(
  `CPU ms per turn (median of ${rounds} rounds of ${turns} turns; includes the scripted model's own work):`,
);
for (const [shape, row] of Object.entries(out)) {
  const cells = Object.entries(row).map(([k, v]) => `${k} ${v}`);
  console.log(`  ${shape}: ${cells.join(', ')}`);
}
console.log(JSON.stringify(out));
