// Issue 36 (dbos36c): does a loop cost more when each of its steps sits between database round trips,
// with no engine at all? Modes, interleaved session by session: `plain` (the agent in process),
// `seam` (its effects through an in-memory DurableSteps recording JSON text, as the DBOS adapter's),
// `seam+pg` (each step after `rt` and before `rt + 1` round trips of `SELECT 1` on a PostgreSQL of its
// own, fsync on: DBOS's three statements before a step and four after it), `pg-only` (those round
// trips alone), and the hand-written loop (bench/lib/chat-calls.mjs) without and with them. Prints
// CPU and wall per session (mean +- standard error) and `seam+pg - seam - pg-only`, `hand+pg - hand -
// pg-only`: what the interleaving itself costs, whoever wrote the loop.
// `gap` (dbosgap36): what sits between the steps instead of `SELECT 1` round trips, to tell what makes
// the agent's own work dearer there: `imm` (an event-loop turn, no code), `js` (JSON of a 400-item
// object: other code that allocates), `spin` (a read of 8 MB: the data caches, no allocation),
// `alloc` (6,000 small objects: the young generation, little code). The modes' names keep `pg`.
// npm run build && node bench/steps-between-round-trips.mjs [text|batch|chain] [sessions=100] [rt=3]
//   [gap=pg|imm|js|spin|alloc]
import pg from 'pg';
import { createAgent } from '../dist/index.js';
import { startBenchCluster } from './lib/engine-bench.mjs';
import {
  closeShapes,
  FINAL,
  handCompletes,
  handTurn,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';

const SHAPES = await startShapes();
const cluster = await startBenchCluster();
const pool = new pg.Pool({ connectionString: await cluster.database('il'), max: 4 });
const shape = process.argv[2] ?? 'chain';
const N = Number(process.argv[3] ?? 100);
const RT = Number(process.argv[4] ?? 3); // round trips before and after each step (DBOS: 3 before, 4 after)
let n = 0;
const steps = { chain: 11, text: 1, batch: 7 }[shape];
const GAP = process.argv[5] ?? 'pg';
const junk = Array.from({ length: 400 }, (_, i) => ({
  id: i,
  name: `item ${i}`,
  tags: ['a', 'b', String(i)],
  nested: { x: i * 2, y: [i, i + 1] },
}));
const big = new Float64Array((8 * 1024 * 1024) / 8);
let sink = 0;
/** One "round trip" of the gap between steps (`gap`). */
const gaps = {
  pg: () => pool.query('SELECT 1'),
  imm: () => new Promise((resolve) => setImmediate(resolve)),
  js: async () => {
    const text = JSON.stringify(junk);
    sink += JSON.parse(text).length + text.replace(/item/g, 'x').length;
  },
  spin: async () => {
    let a = 0;
    for (let j = 0; j < big.length; j += 8) a += big[j];
    sink += a;
  },
  alloc: async () => {
    let keep = null;
    for (let j = 0; j < 6000; j++) keep = { j, next: keep?.j, s: 'x' };
    sink += keep.j;
  },
};
if (!gaps[GAP]) throw new Error(`gap must be one of ${Object.keys(gaps)}, got ${GAP}`);
const rts = async (k) => {
  for (let i = 0; i < k; i++) await gaps[GAP]();
};
const agentWith = async (durableSteps) => {
  const agent = createAgent({
    ...shapeOptions(SHAPES, shape),
    sessionId: `${shape}.s${n++}`,
    ...(durableSteps ? { durableSteps } : {}),
  });
  const r = await agent.send('go');
  if (r.response !== FINAL) throw new Error(r.response);
  agent.stop();
};
const completes = handCompletes(SHAPES);
const handWith = async (step) => {
  const r = await handTurn(completes[shape], step, (xs) => Promise.all(xs));
  if (r.response !== FINAL) throw new Error(r.response);
};
const modes = {
  hand: () => handWith((_k, run) => run()),
  'hand+pg': () =>
    handWith(async (_k, run) => {
      await rts(RT);
      const v = JSON.stringify(await run());
      await rts(RT + 1);
      return JSON.parse(v);
    }),
  plain: () => agentWith(undefined),
  seam: () => agentWith({ step: async (_k, run) => JSON.parse(JSON.stringify(await run())) }),
  'seam+pg': () =>
    agentWith({
      step: async (_k, run) => {
        await rts(RT);
        const v = JSON.stringify(await run());
        await rts(RT + 1);
        return JSON.parse(v);
      },
    }),
  'pg-only': async () => {
    for (let s = 0; s < steps; s++) {
      await rts(RT);
      await rts(RT + 1);
    }
  },
};
for (let i = 0; i < 10; i++) for (const m of Object.values(modes)) await m();
const cpu = Object.fromEntries(Object.keys(modes).map((k) => [k, []]));
const wall = Object.fromEntries(Object.keys(modes).map((k) => [k, []]));
const names = Object.keys(modes);
for (let i = 0; i < N; i++) {
  for (let j = 0; j < names.length; j++) {
    const name = names[(i + j) % names.length];
    const c = process.cpuUsage();
    const t = performance.now();
    await modes[name]();
    wall[name].push(performance.now() - t);
    const u = process.cpuUsage(c);
    cpu[name].push((u.user + u.system) / 1000);
  }
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const se = (xs) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length);
};
for (const k of names)
  console.log(
    shape.padEnd(6),
    k.padEnd(8),
    'cpu',
    mean(cpu[k]).toFixed(2),
    '+-',
    se(cpu[k]).toFixed(2),
    ' wall',
    mean(wall[k]).toFixed(2),
    '+-',
    se(wall[k]).toFixed(2),
  );
const d = cpu['seam+pg'].map((x, i) => x - cpu.seam[i] - cpu['pg-only'][i]);
const w = wall['seam+pg'].map((x, i) => x - wall.seam[i] - wall['pg-only'][i]);
console.log(
  `${shape} seam+pg - seam - pg-only: cpu ${mean(d).toFixed(2)} +- ${se(d).toFixed(2)}, wall ${mean(w).toFixed(2)} +- ${se(w).toFixed(2)}`,
);
const dh = cpu['hand+pg'].map((x, i) => x - cpu.hand[i] - cpu['pg-only'][i]);
const wh = wall['hand+pg'].map((x, i) => x - wall.hand[i] - wall['pg-only'][i]);
console.log(
  `${shape} hand+pg - hand - pg-only: cpu ${mean(dh).toFixed(2)} +- ${se(dh).toFixed(2)}, wall ${mean(wh).toFixed(2)} +- ${se(wh).toFixed(2)}`,
);
await pool.end();
if (sink === -1) console.log(sink);
await cluster.stop();
await closeShapes(SHAPES);
