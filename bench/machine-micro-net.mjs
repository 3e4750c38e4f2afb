// Same as machine-micro.mjs but over the network: the bench's scripted server (URL in argv[2]) and the
// real SDK, to see which layer adds what. Kinds: floor (XState floor), machine (agentMachine with
// agentloop's own effects, no Agent facade), agent (createAgent). Prints µs per model call.
import OpenAI from 'openai';
import { assign, createActor, fromPromise, setup, toPromise, waitFor } from 'xstate';
import { z } from 'zod';

const url = process.argv[2];
const dist = new URL('../dist', import.meta.url).pathname;
const {
  agentMachine,
  bindAgentEffects,
  createAgent,
  defineTool,
  callLlmEffect,
  runToolsEffect,
  ToolRegistry,
} = await import(`${dist}/index.js`);
const task = await import('./lib/task.mjs');
const client = new OpenAI({ baseURL: url, apiKey: 'bench', maxRetries: 0 });
const tools = [
  {
    type: 'function',
    function: { name: 'lookup', description: task.TOOL_DESCRIPTION, parameters: task.TOOL_PARAMETERS },
  },
];
const floor = setup({
  actors: {
    callLlm: fromPromise(
      async ({ input, signal }) =>
        (
          await client.chat.completions.create(
            { model: task.MODEL, messages: input, tools, tool_choice: 'auto' },
            { signal },
          )
        ).choices[0].message,
    ),
    runTools: fromPromise(async ({ input }) =>
      input.map((c) => ({
        role: 'tool',
        tool_call_id: c.id,
        content: task.lookup(JSON.parse(c.function.arguments)),
      })),
    ),
  },
}).createMachine({
  context: () => ({
    messages: [
      { role: 'system', content: task.SYSTEM_PROMPT },
      { role: 'user', content: task.USER_PROMPT },
    ],
    toolCalls: [],
  }),
  initial: 'Thinking',
  states: {
    Thinking: {
      invoke: {
        id: 'callLlm',
        src: 'callLlm',
        input: ({ context }) => context.messages,
        onDone: [
          {
            guard: ({ event }) => (event.output.tool_calls?.length ?? 0) > 0,
            target: 'ExecutingTool',
            actions: assign(({ context, event }) => ({
              toolCalls: event.output.tool_calls,
              messages: [...context.messages, event.output],
            })),
          },
          {
            target: 'Done',
            actions: assign(({ context, event }) => ({ messages: [...context.messages, event.output] })),
          },
        ],
      },
    },
    ExecutingTool: {
      invoke: {
        id: 'runTools',
        src: 'runTools',
        input: ({ context }) => context.toolCalls,
        onDone: {
          target: 'Thinking',
          actions: assign(({ context, event }) => ({
            toolCalls: [],
            messages: [...context.messages, ...event.output],
          })),
        },
      },
    },
    Done: { type: 'final' },
  },
});
const lookup = defineTool({
  name: 'lookup',
  description: task.TOOL_DESCRIPTION,
  parameters: z.object({ key: z.string() }),
  execute: (a) => task.lookup(a),
});
const registry = new ToolRegistry([lookup]);
const effects = {
  callLlm: callLlmEffect({ client, model: task.MODEL, registry, stream: false }),
  runTools: runToolsEffect({ registry }),
  hears: (t) => t === 'turn_end',
};
const kinds = {
  async floor() {
    const a = createActor(floor);
    a.start();
    await toPromise(a);
  },
  async machine() {
    const a = createActor(agentMachine, {
      input: { messages: [{ role: 'system', content: task.SYSTEM_PROMPT }] },
    });
    bindAgentEffects(a, effects);
    a.start();
    await waitFor(a, (s) => s.matches('AwaitingInput'));
    a.send({ type: 'USER_MESSAGE', text: task.USER_PROMPT, at: Date.now() });
    await waitFor(a, (s) => s.matches('Completed'));
    a.stop();
  },
  async agent() {
    const agent = createAgent({
      client,
      model: task.MODEL,
      instructions: task.SYSTEM_PROMPT,
      tools: [lookup],
      stream: false,
      loopControlTools: false,
      contextWindow: false,
    });
    await agent.send(task.USER_PROMPT);
    agent.stop();
  },
};
const which = (process.argv[3] ?? 'floor,machine,agent').split(',');
const sessions = Number(process.argv[4] ?? 200);
for (const k of which) for (let i = 0; i < 30; i++) await kinds[k]();
const out = {};
for (let round = 0; round < 5; round++)
  for (const k of which) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    for (let i = 0; i < sessions; i++) await kinds[k]();
    const c = process.cpuUsage(c0);
    (out[k] ??= []).push([
      Number(process.hrtime.bigint() - t0) / 1e3 / sessions / 11,
      (c.user + c.system) / sessions / 11,
    ]);
  }
const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const k of which) {
  const w = med(out[k].map((x) => x[0]));
  const c = med(out[k].map((x) => x[1]));
  console.log(
    k.padEnd(8),
    'wall',
    w.toFixed(0),
    'cpu',
    c.toFixed(0),
    'us/call',
    `wall ${(w / med(out[which[0]].map((x) => x[0]))).toFixed(2)}x`,
  );
}
