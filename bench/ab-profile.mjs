// Two CPU profiles taken in ONE process, interleaved (llm36, 2026-11-29): bench/engines.mjs's
// `in-process` session of a build (`--a`/`--b`: a dist folder) or the hand-written loop (`hand`), in
// alternating blocks of `--block` sessions; the inspector's profiler runs during each block and adds
// its samples to that side's totals. Two `--cpu-prof` runs taken one after the other on this shared
// machine differ by the load between them (2x at times); here both sides see the same load. Prints
// self time a session by file (folder under dist/, package under node_modules/) and by function,
// B - A, A, B (ms, under the profiler: sessions run 1.5-2.5x slower than without it), then the
// functions matching `--grep`.
//   npm run build && node bench/ab-profile.mjs --a=<main copy>/dist --b=dist [--shape=chain]
//     [--blocks=40] [--block=25] [--interval=100] [--min=0.01] [--top=40] [--bottom=10] [--grep=dist/llm]
import inspector from 'node:inspector/promises';
import path from 'node:path';
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

const args = flagArgs();
const shape = args.shape ?? 'chain';
const blocks = Number(args.blocks ?? 40);
const block = Number(args.block ?? 25);
const SHAPES = await startShapes();
const completes = handCompletes(SHAPES);
let n = 0;
async function modeOf(spec) {
  if (spec === 'hand')
    return async () => {
      const r = await handTurn(
        completes[shape],
        (_n, run) => run(),
        (s) => Promise.all(s),
      );
      if (r.response !== FINAL) throw new Error('bad');
    };
  const m = await import(`${path.resolve(spec)}/index.js`);
  const lookup = lookupTool(m.defineTool);
  return async () => {
    const agent = m.createAgent({
      ...shapeOptions(SHAPES, shape),
      tools: [lookup],
      sessionId: `${shape}.s${n++}`,
    });
    const result = await agent.send('look the values up');
    agent.stop();
    if (result.response !== FINAL) throw new Error('bad');
  };
}
const specs = [args.a, args.b];
const runs = [await modeOf(specs[0]), await modeOf(specs[1])];
const session = new inspector.Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: Number(args.interval ?? 100) });
const totals = [
  { files: new Map(), fns: new Map(), sessions: 0 },
  { files: new Map(), fns: new Map(), sessions: 0 },
];
const groupOf = (url, fn) => {
  let w = url ? url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/') : `(native) ${fn}`;
  w = w.replace(/^file:\/\/\/tmp\/[^/]+\//, '');
  const key = w.startsWith('node_modules/')
    ? w
        .split('/')
        .slice(0, w.split('/')[1].startsWith('@') ? 3 : 2)
        .join('/')
    : w.startsWith('dist/')
      ? w.split('/').slice(0, 2).join('/')
      : w;
  return [w, key];
};
const add = (t, profile) => {
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  for (let i = 0; i < profile.samples.length; i++) {
    const cf = byId.get(profile.samples[i]).callFrame;
    const us = profile.timeDeltas[i + 1] ?? 0; // delta to the next sample is this sample's time
    const [w, key] = groupOf(cf.url, cf.functionName);
    t.files.set(key, (t.files.get(key) ?? 0) + us);
    const fk = `${cf.functionName || '(anon)'} ${w}:${cf.lineNumber + 1}`;
    t.fns.set(fk, (t.fns.get(fk) ?? 0) + us);
  }
};
for (let i = 0; i < 30; i++) for (const r of runs) await r();
for (let b = 0; b < blocks; b++) {
  for (const k of b % 2 ? [1, 0] : [0, 1]) {
    await session.post('Profiler.start');
    for (let i = 0; i < block; i++) await runs[k]();
    const { profile } = await session.post('Profiler.stop');
    add(totals[k], profile);
    totals[k].sessions += block;
  }
}
await closeShapes(SHAPES);
const per = (t, k, map) => (t[map].get(k) ?? 0) / t.sessions / 1000;
const diff = (map) =>
  [...new Set([...totals[0][map].keys(), ...totals[1][map].keys()])]
    .map((k) => [
      k,
      per(totals[1], k, map) - per(totals[0], k, map),
      per(totals[0], k, map),
      per(totals[1], k, map),
    ])
    .sort((x, y) => y[1] - x[1]);
const sum = (t) => [...t.files.values()].reduce((a, x) => a + x, 0) / t.sessions / 1000;
console.log(
  `B - A, ms a ${shape} session (A=${specs[0]} ${sum(totals[0]).toFixed(3)}, B=${specs[1]} ${sum(totals[1]).toFixed(3)})`,
);
const min = Number(args.min ?? 0.01);
for (const [k, d, a, b] of diff('files'))
  if (Math.abs(d) >= min)
    console.log(d.toFixed(3).padStart(8), a.toFixed(3).padStart(7), b.toFixed(3).padStart(7), k);
console.log('--- functions');
const fd = diff('fns');
const top = Number(args.top ?? 40);
for (const [k, d, a, b] of [...fd.slice(0, top), ['...', 0, 0, 0], ...fd.slice(-Number(args.bottom ?? 10))])
  console.log(d.toFixed(3).padStart(8), a.toFixed(3).padStart(7), b.toFixed(3).padStart(7), k);
if (args.grep) {
  console.log(`--- /${args.grep}/`);
  for (const [k, d, a, b] of fd.filter(([k]) => new RegExp(args.grep).test(k)).slice(0, 60))
    console.log(d.toFixed(3).padStart(8), a.toFixed(3).padStart(7), b.toFixed(3).padStart(7), k);
}
process.exit(0);
