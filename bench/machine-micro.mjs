// Machine-level micro benchmark: per model call cost of the XState floor vs agentloop's machine vs the
// whole agent, with model and tools answering at once (no network). CPU-bound, so comparable in one run.
import { assign, createActor, fromPromise, setup, toPromise, waitFor } from 'xstate';

const dist = process.argv[2] ?? new URL('../dist', import.meta.url).pathname;
const { agentMachine, bindAgentEffects, createAgent, defineTool } = await import(`${dist}/index.js`);
const { z } = await import('zod');
const CALLS = 11;
const doc = 'x'.repeat(1000);
const reply = (i) => ({
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: `{"key":"k${i}"}` } },
  ],
});
const final = { role: 'assistant', content: 'done '.repeat(40) };
// floor
const floor = setup({
  actors: {
    callLlm: fromPromise(async ({ input }) => {
      const n = input.filter((m) => m.role === 'assistant').length;
      return n < CALLS - 1 ? reply(n) : final;
    }),
    runTools: fromPromise(async ({ input }) =>
      input.map((c) => ({ role: 'tool', tool_call_id: c.id, content: doc })),
    ),
  },
}).createMachine({
  context: () => ({
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
    ],
    toolCalls: [],
    calls: 0,
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
              calls: context.calls + 1,
              toolCalls: event.output.tool_calls,
              messages: [...context.messages, event.output],
            })),
          },
          {
            target: 'Done',
            actions: assign(({ context, event }) => ({
              calls: context.calls + 1,
              messages: [...context.messages, event.output],
            })),
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
async function floorSession() {
  const a = createActor(floor);
  a.start();
  await toPromise(a);
}
// agentloop machine with direct effects
const call = (i) => ({
  id: `call_${i}`,
  name: 'lookup',
  argsText: `{"key":"k${i}"}`,
  args: { key: `k${i}` },
  needsApproval: false,
});
const effects = {
  callLlm: async (input) => {
    const n = input.messages.filter((m) => m.role === 'assistant').length;
    if (n < CALLS - 1)
      return {
        message: reply(n),
        calls: [call(n)],
        finishReason: 'tool_calls',
        usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
        at: Date.now(),
      };
    return {
      message: final,
      calls: [],
      finishReason: 'stop',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      at: Date.now(),
    };
  },
  runTools: async (input) =>
    input.calls.map((c) => ({ toolCallId: c.id, name: c.name, content: doc, isError: false, durationMs: 0 })),
  hears: (t) => t === 'turn_end',
};
async function machineSession() {
  const a = createActor(agentMachine, { input: { messages: [{ role: 'system', content: 's' }] } });
  bindAgentEffects(a, effects);
  a.start();
  await waitFor(a, (s) => s.matches('AwaitingInput'));
  a.send({ type: 'USER_MESSAGE', text: 'u', at: Date.now() });
  await waitFor(a, (s) => s.matches('Completed'));
  a.stop();
}
// whole agent with an instant fake client
const lookup = defineTool({
  name: 'lookup',
  description: 'd',
  parameters: z.object({ key: z.string() }),
  execute: async () => doc,
});
const client = {
  apiKey: 'x',
  chat: {
    completions: {
      create: async (body) => {
        const n = body.messages.filter((m) => m.role === 'assistant').length;
        const message = n < CALLS - 1 ? reply(n) : final;
        return {
          choices: [{ message, finish_reason: n < CALLS - 1 ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        };
      },
    },
  },
};
async function agentSession() {
  const agent = createAgent({
    client,
    tools: [lookup],
    stream: false,
    loopControlTools: false,
    contextWindow: false,
  });
  await agent.send('u');
  agent.stop();
}
const kinds = { floor: floorSession, machine: machineSession, agent: agentSession };
const which = (process.argv[3] ?? 'floor,machine,agent').split(',');
const sessions = Number(process.argv[4] ?? 2000);
for (const k of which) for (let i = 0; i < 200; i++) await kinds[k]();
const out = {};
for (let round = 0; round < 3; round++)
  for (const k of which) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < sessions; i++) await kinds[k]();
    const us = Number(process.hrtime.bigint() - t0) / 1e3 / sessions / CALLS;
    out[k] ??= [];
    out[k].push(us);
  }
for (const k of which) {
  const v = out[k].sort((a, b) => a - b)[1];
  console.log(
    k.padEnd(8),
    v.toFixed(1),
    'us/call',
    which[0] !== k ? `(${(v / out[which[0]].sort((a, b) => a - b)[1]).toFixed(2)}x ${which[0]})` : '',
  );
}
