// Where the Restate adapter's CPU goes (issue 36): this process's CPU profile of the measured sessions
// only (no start-up, no warm-up), per mode, with the self time per session of each file and function,
// so that the adapter's turn can be read against the bare engine's and the agent in process.
// Modes: `restate` (this build's restateAgent), `restate-b` (`--b=<dist>`: another build's, same
// server and endpoint), `bare` (bench/lib/engine-shapes.mjs's bare object: the same `ctx.run`
// steps in the turn's shape, no agent), `inproc` (createAgent, no engine), and (rsplit36) `agent` (the
// agent on bare `ctx.run` steps, none of the adapter: bench/lib/restate-agent-object.mjs), `hand` (the
// hand-written loop on Restate keeping its messages) and `inhand` (the same loop in process). With
// all four of agent, hand, inproc and inhand, a last table lists per file the agent's own part inside
// Restate, (agent - hand) - (inproc - inhand), and with restate and agent, the adapter's own,
// restate - agent (ms of self time a session). Each mode's profile is
// written to `--out` (default /tmp/restate-turn-profile) as <mode>-<shape>.cpuprofile.
// npm run build && RESTATE_LOGGING=ERROR node bench/restate-turn-profile.mjs [--sessions=40] [--shapes=text,batch,chain]
//   [--only=restate,restate-b,bare,inproc,agent,hand,inhand] [--b=<another build's dist>] [--top=25] [--out=<dir>]
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { createAgent } from '../dist/index.js';
import { benchArgs, onlyOf } from './lib/engine-bench.mjs';
import {
  bareRestateObject,
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
import { agentRestateObject } from './lib/restate-agent-object.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const sessions = Number(args.sessions ?? 40);
const top = Number(args.top ?? 25);
const out = args.out ?? '/tmp/restate-turn-profile';
const only = onlyOf(args, 'restate,restate-b,bare,inproc');
mkdirSync(out, { recursive: true });
const SHAPES = await startShapes();
const completes = handCompletes(SHAPES);
const shapes = (args.shapes ?? 'text,batch,chain').split(',');
const options = (id) => shapeOptions(SHAPES, shapeOf(id));
const check = (result) => {
  if (result.response !== FINAL) throw new Error(`unexpected ${JSON.stringify(result)}`);
};

const sdk = await import('@restatedev/restate-sdk');
const { restateAgent, restateClient } = await import('../dist/engines/restate/index.js');
const { startRestateServer } = await import('../test/support/restate-server.mjs');
const b = args.b ? await import(path.resolve(args.b, 'engines/restate/index.js')) : undefined;
const server = await startRestateServer();
const endpoint = await serveRestateEndpoint(sdk, server, [
  restateAgent('bench', options),
  ...(b ? [b.restateAgent('benchb', options)] : []),
  bareRestateObject(sdk),
  agentRestateObject(sdk, SHAPES),
  handRestateObject(sdk, completes),
]);
const client = restateClient({ url: server.ingress, agent: 'bench' });
const clientB = b?.restateClient({ url: server.ingress, agent: 'benchb' });
const modes = {
  restate: async (id) => check(await client.send(id, 'go')),
  ...(clientB ? { 'restate-b': async (id) => check(await clientB.send(id, 'go')) } : {}),
  bare: async (id) => check(await sendBareRestate(server.ingress, id, shapeOf(id))),
  agent: async (id) => check(await sendBareRestate(server.ingress, id, shapeOf(id), 'agent')),
  hand: async (id) => check(await sendBareRestate(server.ingress, id, shapeOf(id), 'hand')),
  inhand: async (id) =>
    check(
      await handTurn(
        completes[shapeOf(id)],
        (_name, run) => run(),
        (steps) => Promise.all(steps),
      ),
    ),
  inproc: async (id) => {
    const agent = createAgent({ ...options(id), sessionId: id.replace('~', '.') });
    check(await agent.send('go'));
    agent.stop();
  },
};

const inspector = new Session();
inspector.connect();
await inspector.post('Profiler.enable');
await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let n = 0;
/** Self ms a session by file, per shape and mode. */
const byFile = {};
try {
  for (const shape of shapes) {
    // Warm-up: every mode, so that none pays the JIT for the others.
    for (let i = 0; i < 10; i++)
      for (const [mode, run] of Object.entries(modes)) if (only.has(mode)) await run(`${shape}~warm-${n++}`);
    for (const [mode, run] of Object.entries(modes)) {
      if (!only.has(mode)) continue;
      await inspector.post('Profiler.start');
      const before = cpuMs();
      const start = performance.now();
      for (let i = 0; i < sessions; i++) await run(`${shape}~${mode}-${n++}`);
      const wall = performance.now() - start;
      const cpu = cpuMs() - before;
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(path.join(out, `${mode}-${shape}.cpuprofile`), JSON.stringify(profile));
      console.log(
        `\n== ${mode} ${shape}: ${(wall / sessions).toFixed(2)} ms, CPU ${(cpu / sessions).toFixed(2)} ms per session`,
      );
      console.log(summarize(profile, sessions, top));
      byFile[shape] ??= {};
      byFile[shape][mode] = filesOf(profile, sessions);
    }
  }
} finally {
  inspector.disconnect();
  await endpoint.close();
  await server.stop();
  await closeShapes(SHAPES);
}

// The split by file (ms of self time a session), where the modes for it were profiled.
for (const [shape, modesOf] of Object.entries(byFile)) {
  const columns = [];
  const get = (mode, file) => modesOf[mode]?.get(file) ?? 0;
  if (modesOf.restate && modesOf.agent)
    columns.push(["adapter's own (restate - agent)", (f) => get('restate', f) - get('agent', f)]);
  if (modesOf.agent && modesOf.hand && modesOf.inproc && modesOf.inhand)
    columns.push([
      "agent's own inside Restate ((agent - hand) - (inproc - inhand))",
      (f) => get('agent', f) - get('hand', f) - (get('inproc', f) - get('inhand', f)),
    ]);
  if (columns.length === 0) continue;
  const files = new Set(Object.values(modesOf).flatMap((m) => [...m.keys()]));
  for (const [label, of] of columns) {
    const rows = [...files].map((f) => [f, of(f)]).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
    const total = rows.reduce((a, [, v]) => a + v, 0);
    console.log(`\n== ${shape}: ${label}, ms a session by file (total ${total.toFixed(3)})`);
    for (const [f, v] of rows.slice(0, 15)) console.log(`  ${v.toFixed(3).padStart(7)} ms  ${f}`);
  }
}

/** Self ms a session by file (as {@link summarize} groups them), idle left out. */
function filesOf(profile, count) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const files = new Map();
  for (const [i, id] of profile.samples.entries()) {
    const frame = byId.get(id).callFrame;
    if (frame.functionName === '(idle)') continue;
    const file = fileOf(frame);
    files.set(file, (files.get(file) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000 / count);
  }
  return files;
}

/** A frame's file: a package for node_modules, dist's or bench's path, or a V8 pseudo-frame's name. */
function fileOf(frame) {
  const where = frame.url
    ? frame.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/')
    : frame.functionName.startsWith('(')
      ? frame.functionName
      : '(native)';
  return where.startsWith('node_modules/')
    ? where
        .split('/')
        .slice(0, where.split('/')[1].startsWith('@') ? 3 : 2)
        .join('/')
    : where;
}

/** Self time per session by file and by function, idle left out. */
function summarize(profile, count, limit) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  for (const [i, id] of profile.samples.entries()) {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const files = new Map();
  const fns = new Map();
  let busy = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id).callFrame;
    if (frame.functionName === '(idle)') continue;
    busy += us;
    const where = frame.url
      ? frame.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/')
      : frame.functionName.startsWith('(')
        ? frame.functionName
        : '(native)';
    const file = where.startsWith('node_modules/')
      ? where
          .split('/')
          .slice(0, where.split('/')[1].startsWith('@') ? 3 : 2)
          .join('/')
      : where;
    files.set(file, (files.get(file) ?? 0) + us);
    const fn = `${frame.functionName || '(anon)'} ${where}:${frame.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const show = (map, limitTo) =>
    [...map]
      .sort((x, y) => y[1] - x[1])
      .slice(0, limitTo)
      .map(([k, us]) => `  ${(us / 1000 / count).toFixed(3).padStart(7)} ms  ${k}`)
      .join('\n');
  return `busy ${(busy / 1000 / count).toFixed(2)} ms per session (sampled)\n-- by file --\n${show(files, 20)}\n-- by function --\n${show(fns, limit)}`;
}
