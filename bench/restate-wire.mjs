// What Restate is asked to do per session (issue 36, rest36d), the adapter against the hand-written
// loop (which keeps its messages in the object's state, as a loop that takes a session's next turn
// must) and the bare engine, counted (no timings but the per-step gaps):
//   journal   each invocation's journal entries from the admin API (`sys_journal`: kind, name, bytes
//             as Restate stores them) and the object's state entries with their bytes (`state`)
//   wire      the endpoint's HTTP/2 stream of each invocation: writes to restate-server (each one a
//             wake of the server) and chunks from it, with their bytes
//   gaps      (`--gaps=<n>`: n sessions each, interleaved) per step, medians in ms: an ack from the
//             server to the asker settled, settled to the next step asked (the machine's reaction),
//             asked to its closure started (the adapter: asked to the loop's wait, `next`, and that
//             to the closure started, the SDK's flush and wait), an ack to the next closure started
// npm run build && node bench/restate-wire.mjs [--shapes=text,batch,chain] [--gaps=20] [--dump]
import http2 from 'node:http2';
import { benchArgs } from './lib/engine-bench.mjs';
import {
  bareRestateObject,
  closeShapes,
  handCompletes,
  handRestateObject,
  sendBareRestate,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { restateAdmin } from './lib/restate-admin.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const shapes = String(args.shapes ?? 'text,batch,chain').split(',');
const gapSessions = Number(args.gaps ?? 0);
const sdk = await import('@restatedev/restate-sdk');
const { startRestateServer } = await import('../test/support/restate-server.mjs');
const { restateAgent, restateClient } = await import('../dist/engines/restate/index.js');
const { RestateStepDriver } = await import('../dist/engines/restate/restate-steps.js');

/** The marks of the session being probed (undefined between probes). */
let marks;
const mark = (what, bytes = 0) => marks?.push({ t: performance.now(), what, bytes });
// The adapter's steps: when the machine asks for one, when its closure starts, when its asker is settled.
const driverStep = RestateStepDriver.prototype.step;
RestateStepDriver.prototype.step = function step(key, run) {
  mark('ask');
  return driverStep.call(this, key, async () => {
    mark('start');
    return run();
  });
};
const driverNext = RestateStepDriver.prototype.next;
RestateStepDriver.prototype.next = async function next() {
  mark('next');
  const r = await driverNext.call(this);
  mark('settled');
  return r;
};
// The hand-written loop's steps, marked the same way (its `ctx.run` wrapped in the object below).
const markedRun = (ctx) => (name, run) => {
  mark('ask');
  return ctx
    .run(name, async () => {
      mark('start');
      return run();
    })
    .map((value) => {
      mark('settled');
      return value;
    });
};

const SHAPES = await startShapes();
const completes = handCompletes(SHAPES);
const server = await startRestateServer();
const handObject = handRestateObject(sdk, completes);
// The same loop with its steps marked: its own object, so that the journal read above stays the plain one's.
const { handTurn } = await import('./lib/engine-shapes.mjs');
const { firstMessages } = await import('./lib/engine-shapes.mjs');
const handMarked = sdk.object({
  name: 'handmarked',
  handlers: {
    send: async (ctx, input) => {
      const messages = (await ctx.get('messages')) ?? firstMessages();
      const result = await handTurn(
        completes[input.shape],
        markedRun(ctx),
        (s) => sdk.RestatePromise.all(s),
        messages,
      );
      ctx.set('messages', messages);
      return result;
    },
  },
});
let endpoint = sdk.endpoint();
for (const s of [
  restateAgent('bench', (id) => shapeOptions(SHAPES, shapeOf(id))),
  handObject,
  handMarked,
  bareRestateObject(sdk),
])
  endpoint = endpoint.bind(s);
const inner = endpoint.http2Handler();
const http = http2.createServer((req, res) => {
  if (marks && req.url.includes('/invoke/')) {
    const write = res.write.bind(res);
    res.write = (value, cb) => {
      mark('out', value.length);
      return write(value, cb);
    };
    req.on('data', (chunk) => mark('in', chunk.length));
  }
  return inner(req, res);
});
await new Promise((r) => http.listen(0, '127.0.0.1', r));
await server.register(`http://127.0.0.1:${http.address().port}`);
const { call: adminCall, query } = restateAdmin(server.admin);
for (const svc of ['bench', 'hand', 'bare'])
  await adminCall(`/services/${svc}`, 'PATCH', { journal_retention: '1h' });
const client = restateClient({ url: server.ingress, agent: 'bench' });
const MODES = {
  restate: { object: 'bench', send: (id) => client.send(id, 'go') },
  hand: { object: 'hand', send: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'hand') },
  bare: { object: 'bare', send: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'bare') },
};
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[s.length >> 1] * 1000) / 1000 : Number.NaN;
};
try {
  const wire = {};
  for (const shape of shapes) {
    for (const [mode, { object, send }] of Object.entries(MODES)) {
      await send(`${shape}~warm`);
      const id = `${shape}~count`;
      marks = [];
      await send(id);
      const seen = marks;
      marks = undefined;
      const out = seen.filter((m) => m.what === 'out');
      const inn = seen.filter((m) => m.what === 'in');
      const rows = await query(
        `SELECT j.index, j.entry_type AS kind, j.name, j.raw_length AS bytes FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE i.target_service_name = '${object}' AND i.target_service_key = '${id}' ORDER BY j.index`,
      );
      const state = await query(
        `SELECT key, length(value_utf8) AS bytes FROM state WHERE service_name = '${object}' AND service_key = '${id}'`,
      );
      const kinds = {};
      for (const r of rows) {
        const k = r.kind.replace(/^(Command|Notification): /, (_, c) => (c === 'Command' ? '' : 'ack '));
        kinds[k] = kinds[k] ?? { n: 0, bytes: 0 };
        kinds[k].n += 1;
        kinds[k].bytes += Number(r.bytes);
      }
      wire[`${shape} ${mode}`] = {
        entries: rows.length,
        journalBytes: sum(rows.map((r) => Number(r.bytes))),
        stateBytes: sum(state.map((s) => Number(s.bytes))),
        writes: out.length,
        writeBytes: sum(out.map((m) => m.bytes)),
        chunksIn: inn.length,
        chunkBytes: sum(inn.map((m) => m.bytes)),
      };
      console.log(
        `${shape} ${mode}: journal ${Object.entries(kinds)
          .map(([k, v]) => `${k} ${v.n} (${v.bytes} B)`)
          .join(', ')}; state ${state.map((s) => `${s.key} ${s.bytes} B`).join(', ') || 'none'}`,
      );
      if (args.dump) for (const r of rows) console.log(`  ${r.index} ${r.kind} ${r.name ?? ''} ${r.bytes}`);
    }
  }
  console.table(wire);
  if (gapSessions > 0) {
    const gapModes = {
      restate: (id) => client.send(id, 'go'),
      hand: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'handmarked'),
    };
    const gaps = {};
    for (const shape of shapes) {
      for (let i = 0; i < gapSessions + 3; i++) {
        for (const [mode, send] of Object.entries(
          i % 2 ? gapModes : Object.fromEntries(Object.entries(gapModes).reverse()),
        )) {
          marks = i >= 3 ? [] : undefined;
          await send(`${shape}~gap${mode}${i}`);
          const seen = marks;
          marks = undefined;
          if (!seen) continue;
          const name = `${shape} ${mode}`;
          gaps[name] ??= {
            ackToSettled: [],
            settledToAsk: [],
            askToStart: [],
            askToNext: [],
            nextToStart: [],
            ackToStart: [],
          };
          const g = gaps[name];
          let ack;
          let settled;
          let asked;
          // From the first step's start on: the invocation's start (and createAgent) is not a step's gap.
          let begun = false;
          let next;
          for (const m of seen) {
            if (m.what === 'next' && asked !== undefined) {
              g.askToNext.push(m.t - asked);
              next = m.t;
            }
            if (m.what === 'start' && next !== undefined) {
              g.nextToStart.push(m.t - next);
              next = undefined;
            }
            if (m.what === 'in') ack = begun ? m.t : undefined;
            else if (m.what === 'settled' && ack !== undefined) {
              g.ackToSettled.push(m.t - ack);
              settled = m.t;
            } else if (m.what === 'ask' && settled !== undefined) {
              g.settledToAsk.push(m.t - settled);
              settled = undefined;
              asked = m.t;
            } else if (m.what === 'start') {
              begun = true;
              if (ack === undefined) continue;
              g.ackToStart.push(m.t - ack);
              ack = undefined;
              if (asked !== undefined) g.askToStart.push(m.t - asked);
              asked = undefined;
            }
          }
        }
      }
    }
    console.table(
      Object.fromEntries(
        Object.entries(gaps).map(([k, g]) => [
          k,
          Object.fromEntries(Object.entries(g).map(([n, xs]) => [n, median(xs)])),
        ]),
      ),
    );
  }
} finally {
  http.close();
  await server.stop();
  await closeShapes(SHAPES);
}
process.exit(0);
