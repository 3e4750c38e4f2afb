// The Restate step driver and the adapter's loop alone (issue 36, rest36c): the bare engine's steps
// in a shape's plan (bench/lib/engine-shapes.mjs BARE_PLANS: the turn's model and tool steps, a
// batch's steps together), taken by a stand-in for the machine through `RestateStepDriver` and the
// adapter's loop (wait for the machine, `next()`, again), against the same steps awaited with
// `RestatePromise.all` (the bare engine). No agent and no model server, so what is left between the
// modes is the driver's and the loop's cost per round, read without the agent's noise.
// Modes: `bare` (bench/engines.mjs' bare engine), `driver` (this build's driver and quiesce), and
// `driver-b` with `--b=<dist>` (another build's: before/after in one run). One session of each mode
// in turn, in an order shuffled per round (seeded); wall and this process's CPU per session.
// npm run build && RESTATE_LOGGING=ERROR node bench/restate-driver.mjs [--shapes=text,batch,chain]
//   [--sessions=200] [--b=<another build's dist>] [--seed=1]
import path from 'node:path';
import * as sdk from '@restatedev/restate-sdk';
import { startRestateServer } from '../test/support/restate-server.mjs';
import { benchArgs } from './lib/engine-bench.mjs';
import {
  BARE_PLANS,
  bareRestateObject,
  bareStep,
  FINAL,
  sendBareRestate,
  serveRestateEndpoint,
} from './lib/engine-shapes.mjs';
import { threadCpuMs } from './lib/process-cpu.mjs';
import { meanSpread, seededShuffle } from './lib/stats.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const sessions = Number(args.sessions ?? 200);
const shapes = (args.shapes ?? 'text,batch,chain').split(',');
// The package's entry first (it provides Promise.withResolvers on Node 20 for SDK 1.17).
await import('../dist/engines/restate/index.js');
const builds = { driver: await import('../dist/engines/restate/restate-steps.js') };
if (args.b) {
  await import(path.resolve(args.b, 'engines/restate/index.js'));
  builds['driver-b'] = await import(path.resolve(args.b, 'engines/restate/restate-steps.js'));
}

/**
 * The shape's plan through a build's driver: the "machine" asks each group's steps together once the
 * last group settled; the loop is the adapter's (restate-agent.ts): let the machine react, stop when
 * it is done, a second turn before calling it stuck, else settle the next outcome.
 */
const drivenObject = (name, { RestateStepDriver, quiesce }) =>
  sdk.object({
    name,
    handlers: {
      send: async (ctx, input) => {
        const driver = new RestateStepDriver(ctx);
        let done = false;
        const machine = async () => {
          for (const group of BARE_PLANS[input.shape])
            await Promise.all(group.map((s) => driver.step(s.name, bareStep(s.bytes))));
        };
        machine().then(() => {
          done = true;
          driver.wake?.();
        });
        // The build's wait for the machine: `settled()` where the driver has it (rsplit36: at once once
        // the machine asked or ended, two turns otherwise), the two turns of `quiesce()` before.
        const settled = driver.settled ? () => driver.settled() : quiesce;
        let idle = 0;
        for (;;) {
          await settled();
          if (done) break;
          if (driver.idle) {
            if (++idle < 2) continue;
            throw new Error('waits for nothing');
          }
          idle = 0;
          await driver.next();
        }
        return { response: FINAL };
      },
    },
  });

const server = await startRestateServer();
const endpoint = await serveRestateEndpoint(sdk, server, [
  bareRestateObject(sdk),
  ...Object.entries(builds).map(([name, build]) => drivenObject(name, build)),
]);
const modes = ['bare', ...Object.keys(builds)];
const shuffle = seededShuffle(Number(args.seed ?? 1));
const shuffled = () => shuffle(modes);
/** This process's main thread's CPU ms (schedstat; the whole process's where there is none). */
const cpuMs = () => {
  const thread = threadCpuMs();
  if (thread !== undefined) return thread;
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const round = (x) => Math.round(x * 1000) / 1000;
const seen = {};
let n = 0;
try {
  for (const shape of shapes) {
    for (const mode of modes) seen[`${mode} ${shape}`] = { wall: [], cpu: [] };
    for (let i = 0; i < sessions + 10; i++) {
      for (const mode of shuffled()) {
        const id = `${shape}~${mode}-${n++}`;
        const cpu = cpuMs();
        const start = performance.now();
        const result = await sendBareRestate(server.ingress, id, shape, mode);
        const wall = performance.now() - start;
        const used = cpuMs() - cpu;
        if (result?.response !== FINAL) throw new Error(`${mode}: unexpected ${JSON.stringify(result)}`);
        if (i < 10) continue;
        seen[`${mode} ${shape}`].wall.push(wall);
        seen[`${mode} ${shape}`].cpu.push(used);
      }
    }
  }
} finally {
  await endpoint.close();
  await server.stop();
}
console.log(`${sessions} sessions a mode and shape, interleaved (shuffled); ms a session, mean +- s.e.:`);
for (const shape of shapes) {
  const steps = BARE_PLANS[shape].flat().length;
  const bare = seen[`bare ${shape}`];
  for (const mode of modes) {
    const s = seen[`${mode} ${shape}`];
    const wall = meanSpread(s.wall);
    const cpu = meanSpread(s.cpu);
    const over =
      mode === 'bare'
        ? ''
        : `; over bare, paired: wall ${round(meanSpread(s.wall.map((x, k) => x - bare.wall[k])).mean)} +- ${round(meanSpread(s.wall.map((x, k) => x - bare.wall[k])).se)}, CPU ${round(meanSpread(s.cpu.map((x, k) => x - bare.cpu[k])).mean)} +- ${round(meanSpread(s.cpu.map((x, k) => x - bare.cpu[k])).se)} (${steps} steps)`;
    console.log(
      `  ${shape.padEnd(6)} ${mode.padEnd(9)} wall ${round(wall.mean)} +- ${round(wall.se)}, CPU ${round(cpu.mean)} +- ${round(cpu.se)}${over}`,
    );
  }
  if (seen[`driver-b ${shape}`]) {
    const a = seen[`driver ${shape}`];
    const b = seen[`driver-b ${shape}`];
    const wall = meanSpread(a.wall.map((x, k) => x - b.wall[k]));
    const cpu = meanSpread(a.cpu.map((x, k) => x - b.cpu[k]));
    console.log(
      `  ${shape.padEnd(6)} driver less driver-b, paired: wall ${round(wall.mean)} +- ${round(wall.se)}, CPU ${round(cpu.mean)} +- ${round(cpu.se)}`,
    );
  }
}
