// The agent's own CPU per model call and per tool step (agentcpu, 2026-11-29): bench/engines.mjs's
// `in-process` session (createAgent per session, streaming, over the real SDK to the shapes' scripted
// model servers in this process) for one or more builds, and its `hand` session (the hand-written
// loop on the same SDK and servers), interleaved session by session in one process (a seeded shuffle
// per round), this process's main-thread CPU read around each session (Linux schedstat). Prints per
// mode and shape the mean +- s.e. ms a session, the gap to `hand` and between builds (paired), and the
// split per model call / per tool call / per session solved from the three shapes.
//   npm run build && node bench/agent-step-cpu.mjs [--dists=<a>/dist,dist] [--sessions=60] [--warmup=30] [--seed=1] [--no-hand] [--lean] [--wait[=2]]
//   node --cpu-prof bench/agent-step-cpu.mjs --profile=chain [--mode=hand] --sessions=3000   (one mode, one shape)
import path from 'node:path';
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
import { threadCpuMs } from './lib/process-cpu.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dists = (args.dists ?? path.join(here, '..', 'dist')).split(',').map((d) => path.resolve(d));
const sessions = Number(args.sessions ?? 60);
const warmup = Number(args.warmup ?? 30);
const shuffle = seededShuffle(Number(args.seed ?? 1));
const profile = args.profile;

const SHAPES = await startShapes();
const completes = handCompletes(SHAPES);
const check = (response) => {
  if (response !== FINAL) throw new Error(`unexpected ${response}`);
};

const modes = [];
for (const [k, dist] of dists.entries()) {
  const m = await import(`${dist}/index.js`);
  // The tool from this build's `defineTool` (engine-shapes' `lookup` is this checkout's).
  const lookup = lookupTool(m.defineTool);
  let n = 0;
  const agentMode = (name, extra) => ({
    name,
    dist,
    run: async (shape) => {
      const agent = m.createAgent({
        ...shapeOptions(SHAPES, shape),
        tools: [lookup],
        sessionId: `${shape}.s${n++}`,
        ...extra,
      });
      const result = await agent.send('look the values up');
      agent.stop();
      check(result.response);
    },
  });
  modes.push(agentMode(dists.length > 1 ? `agent${k}` : 'agent', {}));
  // `--lean`: the same agent without the default tools the hand-written loop does not send (the loop
  // controls and `update_plan`: their schemas are in every request, serialized by the SDK and parsed
  // by the server), so the gap to `hand` is read without the request's extra bytes.
  // `--wait[=ms]`: the same agent with its steps apart (engines.mjs's `seam-wait`: an in-memory
  // DurableSteps that leaves the thread idle `ms`, default 2, after each step, steps of a batch 1 ms
  // apart), so builds are compared on the agent's CPU when an engine's waits make each step dearer.
  if (args.wait !== undefined) {
    const waitMs = args.wait === 'true' ? 2 : Number(args.wait);
    let running = 0;
    const durableSteps = {
      step: async (_key, run) => {
        const place = running++;
        const value = await run();
        await new Promise((resolve) => setTimeout(resolve, waitMs + place));
        running--;
        return value;
      },
    };
    modes.push(agentMode(`${dists.length > 1 ? `agent${k}` : 'agent'}-wait`, { durableSteps }));
  }
  if (args.lean !== undefined)
    modes.push(
      agentMode(`${dists.length > 1 ? `agent${k}` : 'agent'}-lean`, {
        loopControlTools: false,
        planning: false,
      }),
    );
}
if (args['no-hand'] === undefined)
  modes.push({
    name: 'hand',
    run: async (shape) =>
      check(
        (
          await handTurn(
            completes[shape],
            (_n, run) => run(),
            (steps) => Promise.all(steps),
          )
        ).response,
      ),
  });

if (profile) {
  const mode = modes.find((m) => m.name === (args.mode ?? modes[0].name));
  for (let i = 0; i < warmup; i++) await mode.run(profile);
  const c0 = threadCpuMs();
  for (let i = 0; i < sessions; i++) await mode.run(profile);
  process.stdout.write(
    `${profile}: ${((threadCpuMs() - c0) / sessions).toFixed(3)} ms main-thread CPU a session\n`,
  );
  await closeShapes(SHAPES);
  process.exit(0);
}

const samples = {};
for (const shape of Object.keys(SHAPES)) {
  for (let i = 0; i < warmup; i++) for (const mode of modes) await mode.run(shape);
  for (let i = 0; i < sessions; i++) {
    for (const mode of shuffle(modes)) {
      const c0 = threadCpuMs();
      await mode.run(shape);
      const ms = threadCpuMs() - c0;
      samples[mode.name] ??= {};
      samples[mode.name][shape] ??= [];
      samples[mode.name][shape].push(ms);
    }
  }
}
await closeShapes(SHAPES);

const r = (x) => x.toFixed(3);
const shapeNames = Object.keys(SHAPES);
const line = (label, per) =>
  `${label.padEnd(24)} ${shapeNames.map((s) => `${s} ${r(per[s].mean)} +- ${r(per[s].se)}`).join(' | ')}`;
const paired = (a, b) =>
  Object.fromEntries(
    shapeNames.map((s) => [s, meanSpread(samples[a][s].map((x, i) => x - samples[b][s][i]))]),
  );
/** ms a session = fixed + model calls x model + tool calls x tool, solved from text, batch, chain. */
const split = (per) => {
  const [t, b, c] = shapeNames.map((s) => per[s].mean);
  const { model: mt } = SHAPES.text; // 1 model call, 0 tools
  const model = (c - b) / (SHAPES.chain.model - SHAPES.batch.model); // batch and chain: same 5 tools
  const fixed = t - mt * model;
  const tool = (b - fixed - SHAPES.batch.model * model) / SHAPES.batch.tools;
  return `fixed ${r(fixed)} ms, per model call ${(model * 1000).toFixed(0)} us, per tool call ${(tool * 1000).toFixed(0)} us`;
};
process.stdout.write(
  `main-thread CPU ms a session, mean +- s.e. of ${sessions} (warm-up ${warmup}), seed ${args.seed ?? 1}\n`,
);
for (const mode of modes) {
  const per = Object.fromEntries(shapeNames.map((s) => [s, meanSpread(samples[mode.name][s])]));
  process.stdout.write(`${line(mode.name + (mode.dist ? ` (${mode.dist})` : ''), per)}\n   ${split(per)}\n`);
}
const agents = modes.filter((m) => m.dist && !m.name.endsWith('-lean') && !m.name.endsWith('-wait'));
const waits = modes.filter((m) => m.name.endsWith('-wait'));
const leans = modes.filter((m) => m.name.endsWith('-lean'));
if (samples.hand)
  for (const mode of agents) {
    const per = paired(mode.name, 'hand');
    process.stdout.write(`${line(`${mode.name} - hand`, per)}\n   ${split(per)}\n`);
  }
if (samples.hand)
  for (const mode of leans) {
    const per = paired(mode.name, 'hand');
    process.stdout.write(`${line(`${mode.name} - hand`, per)}\n   ${split(per)}\n`);
  }
for (const group of [agents, waits])
  for (let k = 1; k < group.length; k++) {
    const per = paired(group[k].name, group[0].name);
    process.stdout.write(`${line(`${group[k].name} - ${group[0].name}`, per)}\n   ${split(per)}\n`);
  }
// The agent's CPU made dearer by the waits between its steps, per build.
for (const mode of waits) {
  const plain = mode.name.slice(0, -'-wait'.length);
  if (!samples[plain]) continue;
  const per = paired(mode.name, plain);
  process.stdout.write(`${line(`${mode.name} - ${plain}`, per)}\n   ${split(per)}\n`);
}
