// What copying an object costs on this Node, per pattern (llm36, 2026-11-29): on Node 20 (V8 11) an
// object made by a spread takes the engine's slow path when keys are added to it (in the literal,
// `{ ...base, key }`, or by a second spread), about 1 us per key added; `Object.assign` onto a new
// object does not; a getter in an object literal, and copying from an object that has one, cost about
// 1 and 2 us. The agent's per-call paths use `copyWith` (src/object-copy.ts) where they add keys.
// User CPU ns per object made, best of 3 rounds of `--n` (default 300,000).
//   node bench/object-spread-cost.mjs [--n=300000]
import { flagArgs } from './lib/flags.mjs';

const n = Number(flagArgs().n ?? 300_000);
let sink;
const body = { model: 'm', messages: [], tools: [], tool_choice: 'auto' };
const event = { type: 'content_chunk', sessionId: 's', turn: 1, iteration: 1, timestamp: 5, delta: 'a' };
const plain = (i) => ({ sessionId: 's', turn: i, iteration: 1, messages: body.messages });
const withGetter = (i) => ({
  sessionId: 's',
  turn: i,
  iteration: 1,
  get messages() {
    return body.messages;
  },
});
const STREAM = () => ({ stream: true, stream_options: { include_usage: true } });
const patterns = {
  'literal, 6 keys': (i) => ({ a: i, b: 1, c: 2, d: 3, e: 4, f: 5 }),
  '{ ...body }': () => ({ ...body }),
  '{ ...body, stream, stream_options }': () => ({
    ...body,
    stream: true,
    stream_options: { include_usage: true },
  }),
  '{ ...body, ...{ stream, stream_options } }': () => ({ ...body, ...STREAM() }),
  'Object.assign({}, body, { stream, stream_options })': () => Object.assign({}, body, STREAM()),
  '{ ...event, delta } (keys it has)': (i) => ({ ...event, delta: `${i}` }),
  'Object.assign({}, event, { delta })': (i) => Object.assign({}, event, { delta: `${i}` }),
  'literal with a getter': (i) => ({
    turn: i,
    get signal() {
      return i;
    },
  }),
  'Object.assign({}, plain, 3 keys)': (i) => Object.assign({}, plain(i), { a: 1, b: 2, c: 3 }),
  'Object.assign({}, with a getter, 3 keys)': (i) => Object.assign({}, withGetter(i), { a: 1, b: 2, c: 3 }),
};
for (const [name, make] of Object.entries(patterns)) {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) sink = make(i);
    best = Math.min(best, (process.cpuUsage(start).user * 1000) / n);
  }
  process.stdout.write(`${name.padEnd(52)} ${best.toFixed(0).padStart(6)} ns\n`);
}
if (sink === undefined) process.exitCode = 1;
