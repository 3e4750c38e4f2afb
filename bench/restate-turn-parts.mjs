// Where a Restate turn's cost sits (issue 36): the same session shape run as several handlers on one
// restate-server, one session of each in turn, with wall and CPU (this process) per session:
//   inproc        createAgent, no engine (the bench's in-process baseline)
//   restate       restateAgent (the adapter: snapshot, the step driver and its loop, the view)
//   driven-agent  the agent on `RestateStepDriver` and the adapter's loop, nothing else (no snapshot,
//                 no view, no `turn`)
//   direct        the agent awaiting each `ctx.run` where it asks for it (no driver, no loop): the
//                 thinnest glue there is; only for shapes whose steps run one at a time (text, chain:
//                 SDK 1.17 allows one await at a time, so a batch's five steps fail it)
//   bare          the bare engine of bench/engines.mjs (BARE_PLANS: the same steps, no agent)
//   empty         a handler that does nothing (the ingress call alone)
// `restate - driven-agent` is the adapter's own turn work, `driven-agent - direct` its driver and
// loop, `direct - bare - inproc` what the agent costs more when its effects run in `ctx.run` steps.
// npm run build && RESTATE_LOGGING=ERROR node bench/restate-turn-parts.mjs [--shape=text|chain|batch] [--sessions=40]
import * as sdk from '@restatedev/restate-sdk';
import { restateAgent, restateClient } from '../dist/engines/restate/index.js';
import { quiesce, RestateStepDriver } from '../dist/engines/restate/restate-steps.js';
import { createAgent } from '../dist/index.js';
import { startRestateServer } from '../test/support/restate-server.mjs';
import { benchArgs } from './lib/engine-bench.mjs';
import {
  bareRestateObject,
  closeShapes,
  FINAL,
  sendBareRestate,
  serveRestateEndpoint,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const args = benchArgs();
const shape = args.shape ?? 'text';
const sessions = Number(args.sessions ?? 40);
const SHAPES = await startShapes();
const options = (id) => shapeOptions(SHAPES, shapeOf(id));
const agentIn = (ctx, durableSteps) =>
  createAgent({ ...options(ctx.key), sessionId: ctx.key.replace('~', '.'), durableSteps });

const handlers = {
  direct: async (ctx) => {
    const agent = agentIn(ctx, { step: (key, run) => ctx.run(key, run) });
    try {
      return { response: (await agent.send('go')).response };
    } finally {
      agent.stop();
    }
  },
  'driven-agent': async (ctx) => {
    const driver = new RestateStepDriver(ctx);
    const agent = agentIn(ctx, driver);
    let ended;
    agent.send('go').then(
      (result) => {
        ended = { result };
      },
      (error) => {
        ended = { error };
      },
    );
    try {
      for (;;) {
        await quiesce();
        if (ended) break;
        await driver.next();
      }
      if (ended.error) throw ended.error;
      return { response: ended.result.response };
    } finally {
      agent.stop();
    }
  },
  empty: async () => ({ response: FINAL }),
};
const server = await startRestateServer();
const endpoint = await serveRestateEndpoint(sdk, server, [
  restateAgent('bench', options),
  bareRestateObject(sdk),
  ...Object.entries(handlers).map(([name, send]) => sdk.object({ name, handlers: { send } })),
]);
const client = restateClient({ url: server.ingress, agent: 'bench' });
const call = (name) => async (id) => {
  const response = await fetch(`${server.ingress}/${name}/${encodeURIComponent(id)}/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  return response.json();
};
const modes = {
  inproc: async (id) => {
    const agent = createAgent({ ...options(id), sessionId: id.replace('~', '.') });
    const result = await agent.send('go');
    agent.stop();
    return result;
  },
  restate: (id) => client.send(id, 'go'),
  'driven-agent': call('driven-agent'),
  ...(shape === 'batch' ? {} : { direct: call('direct') }),
  bare: (id) => sendBareRestate(server.ingress, id, shape),
  empty: call('empty'),
};
const usage = () => {
  const u = process.cpuUsage();
  return { cpu: (u.user + u.system) / 1000, sys: u.system / 1000 };
};
const names = Object.keys(modes);
const seen = Object.fromEntries(names.map((m) => [m, { wall: [], cpu: [], sys: [] }]));
let n = 0;
try {
  for (let i = 0; i < sessions + 5; i++) {
    for (let k = 0; k < names.length; k++) {
      const mode = names[(i + k) % names.length];
      const before = usage();
      const start = performance.now();
      const result = await modes[mode](`${shape}~${mode}-${n++}`);
      if (result?.response !== FINAL) throw new Error(`${mode}: unexpected ${JSON.stringify(result)}`);
      if (i < 5) continue;
      const after = usage();
      seen[mode].wall.push(performance.now() - start);
      seen[mode].cpu.push(after.cpu - before.cpu);
      seen[mode].sys.push(after.sys - before.sys);
    }
  }
} finally {
  await endpoint.close();
  await server.stop();
  await closeShapes(SHAPES);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f = (x) => x.toFixed(2).padStart(7);
console.log(
  `${shape}, ${sessions} sessions a mode, interleaved; ms per session: wall median / mean, CPU median / mean (system part)`,
);
for (const [mode, s] of Object.entries(seen)) {
  console.log(
    `  ${mode.padEnd(13)} wall ${f(median(s.wall))} / ${f(mean(s.wall))}   CPU ${f(median(s.cpu))} / ${f(mean(s.cpu))} (${mean(s.sys).toFixed(2)})`,
  );
}
