// What bench/engines.mjs (timings) and bench/engines-count.mjs (counts) both run on the durable
// engines: the agent's tool, the three session shapes with their scripted model servers, and the
// engines alone (a Restate object / a DBOS workflow taking the steps of the adapter's turn in the
// turn's shape, no agent), so that both benches measure the same turns against the same bare engine.
import http2 from 'node:http2';
import { z } from 'zod';
import { createAgent, defineTool } from '../../dist/index.js';
import { startScriptedServer } from '../../dist/testing/index.js';
import { assistantMessage, createComplete } from './chat-calls.mjs';
import { OpenAI } from './root-deps.mjs';

/** What the one tool reads for `key` (the hand-written loop's tool step returns the same). */
export const lookedUp = (key) => `value of ${key} `.repeat(40);
/**
 * The one tool made with `defineTool` of a given build (a bench comparing builds gives each its own,
 * from that build's `dist/index.js`): reads a value from memory (idempotent).
 */
export const lookupTool = (define) =>
  define({
    name: 'lookup',
    description: 'reads a value',
    parameters: z.object({ key: z.string() }),
    idempotent: true,
    execute: async ({ key }) => lookedUp(key),
  });
/** The one tool, of this checkout's build. */
export const lookup = lookupTool(defineTool);
const call = (i) => ({ name: 'lookup', arguments: { key: `k${i}` } });
/** Every shape's final answer. */
export const FINAL = 'All values looked up.';
/** What every session is asked, by the agent modes and the hand-written loop alike. */
export const TASK = 'look the values up';
/** The hand-written loop's first messages: the task, as the agent sends it (no system prompt). */
export const firstMessages = () => [{ role: 'user', content: TASK }];

/** Each shape's model replies, as its scripted model server answers them. */
const SCRIPTS = {
  text: [{ content: FINAL }],
  batch: [{ toolCalls: [0, 1, 2, 3, 4].map(call) }, { content: FINAL }],
  chain: [...[0, 1, 2, 3, 4].map((i) => ({ toolCalls: [call(i)] })), { content: FINAL }],
};

/**
 * Bytes of each step's record, about as the DBOS adapter's turn records them (within ~50 bytes of
 * `node bench/engines-count.mjs --only=dbos`, which lists each step's record: initialize 80, a model
 * call 541 with no tool call, 737 with one, 1,763 with five, a batch marker 95, a lookup 663, less
 * the 43 bytes DBOS wraps around a 1 KB string). Restate's journal holds the same records as JSON
 * objects, a few percent smaller.
 */
const RECORD_BYTES = { model: 500, modelPerCall: 245, tool: 620 };

/**
 * A turn's steps in the turn's shape, as groups started together (a group waits for the one before):
 * per model reply the model call (no `initialize`: the agents have no `initialize` option), and, when it
 * asks for tools (all idempotent: no batch marker),
 * then one step per tool call, all at once (src/machines/durable-effects.ts runs a batch's calls with
 * `Promise.all`). Each step: its name (the adapter's step key without the session) and record bytes.
 */
function planOf(turns) {
  const b = RECORD_BYTES;
  // No `initialize` step: the bench's agents have no `initialize` option, so the adapter records none.
  const plan = [];
  turns.forEach((turn, i) => {
    const calls = turn.toolCalls ?? [];
    const at = `1/${i + 1}`;
    plan.push([{ name: `${at}/model`, bytes: b.model + b.modelPerCall * calls.length }]);
    if (calls.length === 0) return;
    // No batch marker: the adapter records one only for a batch holding a call that is not
    // idempotent, and `lookup` is idempotent (src/machines/durable-effects.ts).
    plan.push(calls.map((_, k) => ({ name: `${at}/tool/call_${i}_${k}`, bytes: b.tool })));
  });
  return plan;
}

/** Each shape's bare plan ({@link planOf}), what the bare engines run for a session of that shape. */
export const BARE_PLANS = Object.fromEntries(
  Object.entries(SCRIPTS).map(([shape, turns]) => [shape, planOf(turns)]),
);

/**
 * The shapes: each its scripted model server (`server`), model calls, tool calls, tool batches, the
 * steps the adapter's turn takes (each model call, each tool call) and
 * the bare engines' plan of them ({@link BARE_PLANS}). Close them with {@link closeShapes}.
 */
export async function startShapes() {
  const shapes = {};
  for (const [name, turns] of Object.entries(SCRIPTS)) {
    const calls = turns.map((t) => t.toolCalls?.length ?? 0);
    const shape = {
      turns,
      model: turns.length,
      tools: calls.reduce((a, n) => a + n, 0),
      batches: calls.filter((n) => n > 0).length,
      plan: BARE_PLANS[name],
    };
    shape.server = await startScriptedServer({ scenario: { turns } });
    shape.steps = shape.model + shape.tools;
    if (shape.plan.flat().length !== shape.steps)
      throw new Error(`${name}: the bare plan is not the turn's steps`);
    shapes[name] = shape;
  }
  const request = await agentRequest(shapes.text);
  for (const shape of Object.values(shapes)) shape.request = request;
  await checkSameRequests(shapes);
  return shapes;
}

/**
 * Runs one session of each shape with the agent and one with the hand-written loop, and throws unless
 * every request body of the two is the same text: the bench's comparison of the two loops holds only
 * while they ask the model servers for the same work.
 */
async function checkSameRequests(shapes) {
  const completes = handCompletes(shapes);
  for (const [name, shape] of Object.entries(shapes)) {
    const bodies = () => {
      const texts = shape.server.requests.map((r) => JSON.stringify(r));
      shape.server.reset();
      return texts;
    };
    const agent = createAgent({ ...shapeOptions(shapes, name), sessionId: `${name}.request-check` });
    try {
      await agent.send(TASK);
    } finally {
      agent.stop();
    }
    const agentBodies = bodies();
    await handTurn(
      completes[name],
      (_key, run) => run(),
      (steps) => Promise.all(steps),
    );
    const handBodies = bodies();
    const differs = agentBodies.findIndex((body, i) => body !== handBodies[i]);
    if (differs >= 0 || agentBodies.length !== handBodies.length)
      throw new Error(
        `${name}: the hand-written loop's requests differ from the agent's (request ${differs + 1} of ${agentBodies.length})`,
      );
  }
}

/**
 * The model and the tool list the agent sends (its `lookup` and its default tools: the loop controls
 * and `update_plan`), read from one agent session's first request, so that the hand-written loop
 * sends the same request bodies: what both loops pay to serialize, send and parse is then the same,
 * and what is left between them is the loops' own work. Until 2026-11-29 (issue 36) the hand-written
 * loop sent the bench task's one tool and prompts, 1.4 KB a request less than the agent.
 */
async function agentRequest(shape) {
  const agent = createAgent({ ...shapeOptions({ probe: shape }, 'probe'), sessionId: 'request-probe' });
  try {
    await agent.send(TASK);
  } finally {
    agent.stop();
  }
  const first = shape.server.requests[0];
  shape.server.reset();
  if (!first?.tools?.length) throw new Error('the agent sent no tools: cannot copy its request');
  return { model: first.model, tools: first.tools };
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

/** A bare step's record: `bytes` bytes; with `yieldFirst`, after one turn of the event loop (a step that waits for I/O). */
export const bareStep = (bytes, yieldFirst = false) =>
  yieldFirst
    ? async () => {
        await new Promise((resolve) => setImmediate(resolve));
        return 'x'.repeat(bytes);
      }
    : async () => 'x'.repeat(bytes);

/**
 * Restate alone: object `bare`, handler `send({ shape })` running the shape's plan ({@link BARE_PLANS})
 * as `ctx.run` steps, a group's steps issued together and awaited with `RestatePromise.all` (the SDK's
 * combinator; the adapter issues a batch's tool steps together as well and awaits them through
 * `RestatePromise.race`).
 */
export function bareRestateObject(sdk, { name = 'bare', yieldFirst = false } = {}) {
  return sdk.object({
    name,
    handlers: {
      send: async (ctx, input) => {
        for (const group of planFor(input.shape)) {
          await sdk.RestatePromise.all(group.map((s) => ctx.run(s.name, bareStep(s.bytes, yieldFirst))));
        }
        return { response: FINAL };
      },
    },
  });
}

/**
 * A hand-written agent loop with no agentloop (the `openai` SDK, streaming, as the agent calls it;
 * bench/lib/chat-calls.mjs): each model call and each tool call through `step(name, run)`, a reply's
 * tool calls at once through `all`; `messages` ({@link firstMessages} by default) grows with the turn's. With `ctx.run` as the step it is the least a Restate agent can
 * do for the same turn, so `restate - restate-hand` less `in-process - hand` is the adapter's part
 * against steps that do the same I/O (the bare engine's steps return at once). `messages`: the
 * conversation so far (a session's kept messages), {@link firstMessages} by default; the turn
 * appends to it.
 */
export async function handTurn(complete, step, all, messages = firstMessages()) {
  for (let i = 1; ; i++) {
    const message = await step(`${i}/model`, () => complete(messages));
    messages.push(assistantMessage(message));
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return { response: message.content };
    const results = await all(
      calls.map((call) =>
        step(`${i}/tool/${call.id}`, async () => ({
          role: 'tool',
          tool_call_id: call.id,
          content: lookedUp(JSON.parse(call.function.arguments).key),
        })),
      ),
    );
    messages.push(...results);
  }
}

/** `complete(messages)` per shape: one streaming client of the shape's model server each. */
export function handCompletes(shapes) {
  return Object.fromEntries(
    Object.entries(shapes).map(([name, shape]) => [
      name,
      createComplete(new OpenAI({ baseURL: shape.server.url, apiKey: 'bench', maxRetries: 0 }), {
        stream: true,
        request: shape.request,
      }),
    ]),
  );
}

/**
 * Restate with the hand-written loop ({@link handTurn}): object `hand`, handler `send({ shape })`.
 * Like any loop that must take a session's next turn, it keeps the conversation in the object's
 * state: `get('messages')` at the turn's start, `set('messages')` at its end (the adapter keeps its
 * snapshot, which holds the messages, the same way). `{ keepsState: false }`: the loop before
 * 2026-11-29 (rest36d), which kept nothing and so could not take a second turn (object `handnostate`).
 */
export function handRestateObject(sdk, completes, { keepsState = true } = {}) {
  const step = (ctx) => (name, run) => ctx.run(name, run);
  const all = (steps) => sdk.RestatePromise.all(steps);
  return sdk.object({
    name: keepsState ? 'hand' : 'handnostate',
    handlers: {
      send: keepsState
        ? async (ctx, input) => {
            const messages = (await ctx.get('messages')) ?? firstMessages();
            const result = await handTurn(completes[input.shape], step(ctx), all, messages);
            ctx.set('messages', messages);
            return result;
          }
        : async (ctx, input) => handTurn(completes[input.shape], step(ctx), all),
    },
  });
}

/** Calls the bare Restate object through the ingress for a session of `shape`; its response. */
export async function sendBareRestate(ingress, id, shape, object = 'bare') {
  const response = await fetch(`${ingress}/${object}/${encodeURIComponent(id)}/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ shape }),
  });
  return response.json();
}

/**
 * DBOS alone: registers workflow `bench.bare(shape)` running the shape's plan ({@link BARE_PLANS}) as
 * `DBOS.runStep` steps, a group's steps started together (called in the plan's order, so DBOS numbers
 * them alike in every attempt) and awaited with `Promise.all`, as the adapter's turn runs a batch
 * (before `DBOS.launch()`).
 */
export function registerBareDbosWorkflow(DBOS) {
  return DBOS.registerWorkflow(
    async (shape) => {
      for (const group of planFor(shape)) {
        await Promise.all(group.map((s) => DBOS.runStep(bareStep(s.bytes), { name: s.name })));
      }
      return { response: FINAL };
    },
    { name: 'bench.bare' },
  );
}

/**
 * The hand-written loop ({@link handTurn}) as DBOS workflow `bench.hand(shape, sessionId)`: each model
 * call and each tool call a `DBOS.runStep` recording JSON text (as the adapter's steps record theirs,
 * rather than DBOS's SuperJSON of the object), a reply's tool calls started together and awaited with
 * `Promise.all`. Its steps do the agent's I/O, where the bare engine's return at once: `dbos -
 * dbos-hand` less `in-process - hand` is the adapter's part against steps doing the same I/O
 * (before `DBOS.launch()`; enqueue it with {@link enqueueBareDbos}).
 *
 * With `pool` (dbos36d) it keeps its session as a loop that serves more than one turn must: the
 * conversation is read at the turn's start and saved at its end ({@link handSessions}), two plain
 * statements as the adapter's start and end, so that `dbos - dbos-hand` does not charge the adapter
 * for keeping the state the next turn (and a resume) needs. Without `pool`, the loop keeps nothing
 * (the baseline until dbos36d). `name`: the workflow's (default `bench.hand`).
 */
export function registerHandDbosWorkflow(DBOS, completes, { pool, name = 'bench.hand' } = {}) {
  const step = (name, run) => jsonStep(DBOS, name, run);
  const sessions = pool ? handSessions(pool) : undefined;
  return DBOS.registerWorkflow(
    async (shape, sessionId) => {
      const all = (steps) => Promise.all(steps);
      if (!sessions) return handTurn(completes[shape], step, all);
      const workflowId = DBOS.workflowID;
      const messages = (await sessions.start(sessionId, workflowId)) ?? firstMessages();
      const result = await handTurn(completes[shape], step, all, messages);
      await sessions.end(sessionId, workflowId, messages);
      return result;
    },
    { name },
  );
}

/**
 * A `DBOS.runStep` recording what `run` resolves with as JSON text (as the adapter's steps record
 * theirs, rather than DBOS's SuperJSON of the object): the value itself when the step ran in this
 * execution (as the adapter's steps return it since dbosgap36), the parsed record when DBOS answered
 * from one (a replay).
 */
export async function jsonStep(DBOS, name, run) {
  let ran;
  const recorded = await DBOS.runStep(
    async () => {
      const value = await run();
      ran = { value };
      return JSON.stringify(value);
    },
    { name },
  );
  return ran ? ran.value : JSON.parse(recorded);
}

/**
 * The agent with no adapter as DBOS workflow `bench.agent(shape, sessionId)` (dbos36d): each effect a
 * `DBOS.runStep` recording JSON text (the `durableSteps` seam, as the adapter's steps record theirs),
 * the session's snapshot read at the start and saved at the end as the hand-written loop keeps its
 * messages ({@link handSessions}, schema `bench_agent`), and nothing else of the adapter's: no
 * `Thinking` view, no interrupt watch, no turn loop, no outcome kept. So `dbos - dbos-agent` is the
 * adapter's own part, and `(dbos-agent - dbos-hand) - (in-process - hand)` what the agent itself costs
 * more inside a DBOS workflow than it does in process (before `DBOS.launch()`; enqueue it with
 * {@link enqueueBareDbos}).
 */
export function registerAgentDbosWorkflow(DBOS, shapes, { pool }) {
  const sessions = handSessions(pool, 'bench_agent');
  const steps = { step: (key, run) => jsonStep(DBOS, key, run) };
  return DBOS.registerWorkflow(
    async (shape, sessionId) => {
      const workflowId = DBOS.workflowID;
      const snapshot = await sessions.start(sessionId, workflowId);
      const agent = createAgent({
        ...shapeOptions(shapes, shape),
        sessionId,
        ...(snapshot ? { snapshot } : {}),
        durableSteps: steps,
      });
      try {
        const result = await agent.send(TASK);
        await sessions.end(sessionId, workflowId, agent.actor.getPersistedSnapshot());
        return { response: result.response };
      } finally {
        agent.stop();
      }
    },
    { name: 'bench.agent' },
  );
}

/**
 * The hand-written loop's sessions (`bench_hand.sessions`: a session's messages), written as carefully
 * as the adapter writes its own (src/engines/dbos/dbos-sessions.ts), so that the baseline gets every
 * cut the adapter has: named statements (prepared once a connection); a start that reads the messages
 * the turn starts from (those kept from before the turn when its own end ran already: a replay starts
 * where the first execution started); an end that saves them with the turn's workflow id and commits
 * without waiting for the WAL flush once DBOS holds the workflow in this database (DBOS's record of the
 * workflow's end flushes it). What the hand-written loop leaves out is the adapter's own features: the
 * `Thinking` view its start writes (for `state` and `interrupt`), the interrupt watch, the outcome.
 */
export function handSessions(pool, schema = 'bench_hand') {
  const table = `"${schema}".sessions`;
  let ready;
  const migrate = () =>
    (ready ??= (async () => {
      await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await pool.query(
        `CREATE TABLE IF NOT EXISTS ${table} (session_id text PRIMARY KEY, messages json, prev_messages json, saved_by text)`,
      );
    })());
  const start = {
    name: `${schema}_start`,
    text: `SELECT CASE WHEN saved_by = $2 THEN prev_messages ELSE messages END AS messages FROM ${table} WHERE session_id = $1`,
  };
  const end = {
    name: `${schema}_end`,
    text: `WITH flush AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = $3)
             THEN set_config('synchronous_commit', 'off', true) END IS NOT NULL AS relaxed)
           INSERT INTO ${table} AS s (session_id, messages, saved_by) SELECT $1, $2::json, $3 FROM flush
           ON CONFLICT (session_id) DO UPDATE SET messages = EXCLUDED.messages, saved_by = EXCLUDED.saved_by,
             prev_messages = CASE WHEN s.saved_by = $3 THEN s.prev_messages ELSE s.messages END`,
  };
  return {
    /** The messages turn `workflowId` of the session starts from, or undefined before its first turn. */
    async start(sessionId, workflowId) {
      await migrate();
      const { rows } = await pool.query({ ...start, values: [sessionId, workflowId] });
      return rows[0]?.messages ?? undefined;
    },
    /** Saves the session's messages as turn `workflowId` left them. */
    async end(sessionId, workflowId, messages) {
      await pool.query({ ...end, values: [sessionId, JSON.stringify(messages), workflowId] });
    },
  };
}

/** The bare DBOS workflow's queue (every bench that runs the bare engine on DBOS). */
export const BARE_DBOS_QUEUE = 'bench_bare';

/**
 * Registers the bare workflow's queue with the adapter's queue settings (`dbosAgent(...).start()`):
 * partitioned by session id with one running workflow a partition (the one turn a session at
 * a time, which DBOS dequeues with its partitioned claim), polled at least every `pollMs`; so that the
 * bare engine and the adapter are dequeued by the same code at the same cadence. `{ partitioned:
 * false }`: the plain queue the bare engine used until 2026-11-28 21:00 (a different dequeue), to
 * compare. Call after `DBOS.launch()`.
 */
export async function registerBareDbosQueue(
  DBOS,
  pollMs,
  { name = BARE_DBOS_QUEUE, partitioned = true } = {},
) {
  await DBOS.registerQueue(name, {
    ...(partitioned ? { partitionConcurrency: 1 } : {}),
    onConflict: 'always_update',
    minPollingIntervalMs: pollMs,
  });
}

/**
 * Enqueues the bare workflow for session `id` of `shape` on its queue, keyed by the session as the
 * adapter's `post` keys a turn ({@link registerBareDbosQueue}), with arguments `(shape, id)`;
 * resolves with its workflow id.
 */
export async function enqueueBareDbos(
  DBOS,
  workflow,
  id,
  shape,
  { name = BARE_DBOS_QUEUE, partitioned = true } = {},
) {
  const handle = await DBOS.startWorkflow(workflow, {
    queueName: name,
    ...(partitioned ? { enqueueOptions: { queuePartitionKey: id } } : {}),
  })(shape, id);
  return handle.workflowID;
}

/** A shape's bare plan, or a clear error for a name that is none. */
function planFor(shape) {
  const plan = BARE_PLANS[shape];
  if (!plan)
    throw new Error(`bare engine: no shape named ${JSON.stringify(shape)} (${Object.keys(BARE_PLANS)})`);
  return plan;
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
