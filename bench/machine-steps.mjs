// Counts XState's work per session (actors, events, microsteps, snapshots, executed actions) for
// agentloop and for the XState floor's shape, with the model and the tool answering at once: a
// deterministic check that agentloop's statechart does no more steps than the design's bare shape.
// node bench/machine-steps.mjs (after npm run build)
import { assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import { z } from 'zod';

const m = await import('../dist/index.js');
const CALLS = 11;
const doc = 'x'.repeat(100);
const reply = (i) => ({
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: `{"key":"k${i}"}` } },
  ],
});
const final = { role: 'assistant', content: 'done' };
function counter() {
  const c = {};
  const inspect = (e) => {
    const k = e.type === '@xstate.action' ? `action:${e.action.type}` : e.type;
    c[k] = (c[k] ?? 0) + 1;
  };
  return { c, inspect };
}
const client = {
  apiKey: 'x',
  chat: {
    completions: {
      create: async (body) => {
        const n = body.messages.filter((x) => x.role === 'assistant').length;
        return {
          choices: [
            {
              message: n < CALLS - 1 ? reply(n) : final,
              finish_reason: n < CALLS - 1 ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        };
      },
    },
  },
};
const lookup = m.defineTool({
  name: 'lookup',
  description: 'd',
  parameters: z.object({ key: z.string() }),
  execute: () => doc,
});
const a = counter();
const agent = m.createAgent({
  client,
  tools: [lookup],
  stream: false,
  loopControlTools: false,
  contextWindow: false,
  inspect: a.inspect,
});
await agent.send('u');
agent.stop();
const floor = setup({
  actors: {
    callLlm: fromPromise(async ({ input }) => {
      const n = input.filter((x) => x.role === 'assistant').length;
      return n < CALLS - 1 ? reply(n) : final;
    }),
    runTools: fromPromise(async ({ input }) =>
      input.map((c) => ({ role: 'tool', tool_call_id: c.id, content: doc })),
    ),
  },
}).createMachine({
  context: () => ({ messages: [], toolCalls: [] }),
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
const f = counter();
const fa = createActor(floor, { inspect: f.inspect });
fa.start();
await toPromise(fa);
const keys = [...new Set([...Object.keys(a.c), ...Object.keys(f.c)])].sort();
for (const k of keys)
  console.log(
    k.padEnd(40),
    'agentloop',
    String(a.c[k] ?? 0).padStart(4),
    'floor',
    String(f.c[k] ?? 0).padStart(4),
  );
