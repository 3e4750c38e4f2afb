// What bench/engines.mjs (timings) and bench/engines-count.mjs (counts) both run on the durable
// engines: the agent's tool, the three session shapes with their scripted model servers, and the
// engines alone (a Restate object / a DBOS workflow doing as many steps as the adapter's turn, each
// returning 1 KB, no agent), so that both benches measure the same turns against the same bare engine.
import http2 from 'node:http2';
import { z } from 'zod';
import { defineTool } from '../../dist/index.js';
import { startScriptedServer } from '../../dist/testing/index.js';

/** The one tool: reads a value from memory (idempotent). */
export const lookup = defineTool({
  name: 'lookup',
  description: 'reads a value',
  parameters: z.object({ key: z.string() }),
  idempotent: true,
  execute: async ({ key }) => `value of ${key} `.repeat(40),
});
const call = (i) => ({ name: 'lookup', arguments: { key: `k${i}` } });
/** Every shape's final answer. */
export const FINAL = 'All values looked up.';

/**
 * The shapes: each its scripted model server (`server`), model calls, tool calls, tool batches, and
 * the steps the adapter's turn takes (initialize, each model call, a marker per batch, each tool call).
 * Close them with {@link closeShapes}.
 */
export async function startShapes() {
  const shapes = {
    text: { turns: [{ content: FINAL }], model: 1, tools: 0, batches: 0 },
    batch: {
      turns: [{ toolCalls: [0, 1, 2, 3, 4].map(call) }, { content: FINAL }],
      model: 2,
      tools: 5,
      batches: 1,
    },
    chain: {
      turns: [...[0, 1, 2, 3, 4].map((i) => ({ toolCalls: [call(i)] })), { content: FINAL }],
      model: 6,
      tools: 5,
      batches: 5,
    },
  };
  for (const shape of Object.values(shapes)) {
    shape.server = await startScriptedServer({ scenario: { turns: shape.turns } });
    shape.steps = 1 + shape.model + shape.batches + shape.tools;
  }
  return shapes;
}

export async function closeShapes(shapes) {
  for (const shape of Object.values(shapes)) await shape.server.close();
}

/** A session id's shape: what comes before its first `~` or `.`. */
export const shapeOf = (id) => id.split(/[~.]/)[0];

/** The agent options of a session of `shape` (its own model server). */
export const shapeOptions = (shapes, shape) => ({
  baseURL: shapes[shape].server.url,
  apiKey: 'bench',
  tools: [lookup],
  contextWindow: false,
});

/** One `ctx.run` step of the bare Restate handler, or `DBOS.runStep` of the bare workflow: 1 KB. */
const bareStep = async () => 'x'.repeat(1024);

/** Restate alone: object `bare`, handler `send({ steps })` running `steps` `ctx.run` steps. */
export function bareRestateObject(sdk) {
  return sdk.object({
    name: 'bare',
    handlers: {
      send: async (ctx, input) => {
        for (let i = 0; i < input.steps; i++) await ctx.run(`step-${i}`, bareStep);
        return { response: FINAL };
      },
    },
  });
}

/** Calls the bare Restate object through the ingress for a session of `steps` steps; its response. */
export async function sendBareRestate(ingress, id, steps) {
  const response = await fetch(`${ingress}/bare/${encodeURIComponent(id)}/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ steps }),
  });
  return response.json();
}

/** DBOS alone: registers workflow `bench.bare(steps)` running `steps` steps (before `DBOS.launch()`). */
export function registerBareDbosWorkflow(DBOS) {
  return DBOS.registerWorkflow(
    async (steps) => {
      for (let i = 0; i < steps; i++) await DBOS.runStep(bareStep, { name: `step-${i}` });
      return { response: FINAL };
    },
    { name: 'bench.bare' },
  );
}

/**
 * Serves Restate services (the adapter's and the bare object) as an HTTP/2 endpoint on 127.0.0.1 and
 * registers it with `server` (test/support/restate-server.mjs); resolves with its `close()`.
 */
export async function serveRestateEndpoint(sdk, server, services) {
  let endpoint = sdk.endpoint();
  for (const service of services) endpoint = endpoint.bind(service);
  const http = http2.createServer(endpoint.http2Handler());
  const open = new Set();
  http.on('session', (s) => open.add(s));
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  await server.register(`http://127.0.0.1:${http.address().port}`);
  return {
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => http.close(r));
    },
  };
}
