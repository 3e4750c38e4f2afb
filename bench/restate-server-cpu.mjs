// What restate-server's CPU per session follows (issue 36, rest36d): the adapter's session costs
// restate-server 2.5-10 ms more CPU than the bare engine's, growing with the session's length. This
// runs, interleaved one session each in a shuffled order, the adapter (`restate`), the hand-written
// loop (`hand`, bench/lib/engine-shapes.mjs, keeping its messages in the object's state as a loop
// that takes a session's next turn must; `hand-nostate`, the loop keeping nothing) and the bare
// engine in variants that each add one thing the adapter's session has and the bare engine's lacks:
//   bare          the adapter's steps in the turn's shape, records of the adapter's sizes (BARE_PLANS)
//   bare-small    the same with each model step's record of the hand-written loop's size (154 bytes)
//   bare-state    bare + the adapter's state: `get(snapshot)` at the start, `set(turn)`, and at the
//                 end `set(snapshot)` (4.5 KB), `set(view)` (344 bytes), an output of 120 bytes
//   bare-slow     bare with every step 2 ms longer (a timer in the closure): a longer session, the
//                 same journal
// and reads restate-server's CPU (every thread, schedstat) and the wall time around each session, and
// restate-server's CPU while nothing runs (per ms of wall: its idle rate).
// npm run build && node bench/restate-server-cpu.mjs [--sessions=40] [--shapes=text,chain] [--seed=1]
//   [--only=restate,hand,hand-nostate,bare,bare-small,bare-state,bare-slow] [--slow-ms=2] [--b=<another build's dist>]
import path from 'node:path';
import { benchArgs, onlyOf } from './lib/engine-bench.mjs';
import {
  BARE_PLANS,
  bareStep,
  closeShapes,
  FINAL,
  handCompletes,
  handRestateObject,
  sendBareRestate,
  serveRestateEndpoint,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { processCpuMsFine } from './lib/process-cpu.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const sessions = Number(args.sessions ?? 40);
const shapes = String(args.shapes ?? 'text,chain').split(',');
const slowMs = Number(args['slow-ms'] ?? 2);
const only = onlyOf(args, 'restate,hand,hand-nostate,bare,bare-small,bare-state,bare-slow');
const shuffle = seededShuffle(Number(args.seed ?? 1));

/** A snapshot's and a view's bytes as the adapter writes them for a chain session (engines-count). */
const SNAPSHOT_BYTES = 4500;
const VIEW_BYTES = 340;

/** The bare object in a variant ({@link only}): the plan's steps, with what the variant adds. */
function bareVariant(sdk, name, { smallModel = false, state = false, slow = 0 } = {}) {
  return sdk.object({
    name,
    handlers: {
      send: async (ctx, input) => {
        if (state) {
          await ctx.get('snapshot');
          ctx.set('turn', ctx.request().id);
        }
        for (const group of BARE_PLANS[input.shape]) {
          await sdk.RestatePromise.all(
            group.map((s) => {
              const bytes = smallModel && s.name.endsWith('/model') ? 154 : s.bytes;
              const run = bareStep(bytes);
              return ctx.run(
                s.name,
                slow ? async () => new Promise((r) => setTimeout(() => r(run()), slow)) : run,
              );
            }),
          );
        }
        if (state) {
          ctx.set('snapshot', { blob: 'x'.repeat(SNAPSHOT_BYTES) });
          ctx.set('view', { blob: 'x'.repeat(VIEW_BYTES) });
          return { response: FINAL, pad: 'x'.repeat(80) };
        }
        return { response: FINAL };
      },
    },
  });
}

const SHAPES = await startShapes();
const sdk = await import('@restatedev/restate-sdk');
const { startRestateServer } = await import('../test/support/restate-server.mjs');
const { restateAgent, restateClient } = await import('../dist/engines/restate/index.js');
const other = args.b ? await import(path.resolve(args.b, 'engines/restate/index.js')) : undefined;
const server = await startRestateServer();
const routed = (id) => shapeOptions(SHAPES, shapeOf(id));
const endpoint = await serveRestateEndpoint(sdk, server, [
  restateAgent('bench', routed),
  ...(other ? [other.restateAgent('benchb', routed)] : []),
  handRestateObject(sdk, handCompletes(SHAPES)),
  handRestateObject(sdk, handCompletes(SHAPES), { keepsState: false }),
  bareVariant(sdk, 'bare'),
  bareVariant(sdk, 'baresmall', { smallModel: true }),
  bareVariant(sdk, 'barestate', { state: true }),
  bareVariant(sdk, 'bareslow', { slow: slowMs }),
]);
const client = restateClient({ url: server.ingress, agent: 'bench' });
const clientB = other?.restateClient({ url: server.ingress, agent: 'benchb' });
const check = (r) => {
  if (r?.response !== FINAL) throw new Error(`unexpected answer ${JSON.stringify(r)}`);
};
const MODES = {
  restate: (id) => client.send(id, 'go'),
  ...(clientB ? { 'restate-b': (id) => clientB.send(id, 'go') } : {}),
  hand: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'hand'),
  'hand-nostate': (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'handnostate'),
  bare: (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'bare'),
  'bare-small': (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'baresmall'),
  'bare-state': (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'barestate'),
  'bare-slow': (id) => sendBareRestate(server.ingress, id, shapeOf(id), 'bareslow'),
};
const modes = Object.keys(MODES).filter((m) => only.has(m) || (m === 'restate-b' && clientB));
const serverCpu = () => processCpuMsFine(server.pid);
const out = {};
try {
  for (const shape of shapes) {
    for (let i = 0; i < 5; i++) for (const mode of modes) check(await MODES[mode](`${shape}~w${mode}${i}`));
    const wall = Object.fromEntries(modes.map((m) => [m, []]));
    const cpu = Object.fromEntries(modes.map((m) => [m, []]));
    for (let i = 0; i < sessions; i++) {
      for (const mode of shuffle(modes)) {
        const id = `${shape}~${mode}${i}`;
        const c0 = serverCpu();
        const t0 = performance.now();
        check(await MODES[mode](id));
        const t1 = performance.now();
        const c1 = serverCpu();
        wall[mode].push(t1 - t0);
        cpu[mode].push(c1 - c0);
      }
    }
    for (const mode of modes) {
      const w = meanSpread(wall[mode]);
      const c = meanSpread(cpu[mode]);
      out[`${shape} ${mode}`] = {
        wallMs: +w.mean.toFixed(2),
        wallSe: +w.se.toFixed(2),
        serverCpuMs: +c.mean.toFixed(2),
        serverCpuSe: +c.se.toFixed(2),
      };
    }
  }
  // restate-server's CPU with nothing running, per ms of wall.
  const c0 = serverCpu();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 2000));
  out.idle = { serverCpuMsPerMs: +((serverCpu() - c0) / (performance.now() - t0)).toFixed(4) };
} finally {
  await endpoint.close();
  await server.stop();
  await closeShapes(SHAPES);
}
console.table(out);
