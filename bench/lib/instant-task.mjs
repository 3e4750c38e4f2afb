// The benchmark task with the model and the tool answering at once (no network): what the machine-level
// tools (machine-micro.mjs, machine-steps.mjs) run, so that they measure the same work.
import { assign, createActor, fromPromise, setup, toPromise, waitFor } from 'xstate';

/** Model calls per session: 10 asking for one tool call each, then the answer. */
export const CALLS = 11;
/** What the tool returns. */
export const DOCUMENT = 'x'.repeat(1000);

/** The model's reply `i` (counted from 0) as the API sends it. */
export function modelReply(i) {
  if (i >= CALLS - 1) return { role: 'assistant', content: 'done '.repeat(40) };
  return {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: `{"key":"k${i}"}` } },
    ],
  };
}

/** Replies already made in a conversation (its assistant messages). */
const replies = (messages) => messages.filter((m) => m.role === 'assistant').length;

/** An OpenAI-client-shaped object answering at once (a benchmark double, never used in tests). */
export const instantClient = {
  apiKey: 'instant',
  chat: {
    completions: {
      create: async (body) => {
        const i = replies(body.messages);
        return {
          choices: [{ message: modelReply(i), finish_reason: i < CALLS - 1 ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        };
      },
    },
  },
};

/** agentloop's effects answering at once, to bind to `agentMachine` directly. */
export const instantEffects = {
  callLlm: async (input) => {
    const i = replies(input.messages);
    const message = modelReply(i);
    const calls = (message.tool_calls ?? []).map((c) => ({
      id: c.id,
      name: c.function.name,
      argsText: c.function.arguments,
      args: JSON.parse(c.function.arguments),
      needsApproval: false,
    }));
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    return { message, calls, finishReason: calls.length ? 'tool_calls' : 'stop', usage, at: Date.now() };
  },
  runTools: async (input) =>
    input.calls.map((c) => ({
      toolCallId: c.id,
      name: c.name,
      content: DOCUMENT,
      isError: false,
      durationMs: 0,
    })),
  hears: (type) => type === 'turn_end',
};

/** The XState floor's shape (bench/harness/xstate-floor.mjs) with the instant model and tool. */
export const instantFloor = setup({
  actors: {
    callLlm: fromPromise(async ({ input }) => modelReply(replies(input))),
    runTools: fromPromise(async ({ input }) =>
      input.map((c) => ({ role: 'tool', tool_call_id: c.id, content: DOCUMENT })),
    ),
  },
}).createMachine({
  context: () => ({
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
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

/** Runs one session of the instant floor (`inspect`: an XState inspection observer). */
export async function runInstantFloor(inspect) {
  const actor = createActor(instantFloor, inspect ? { inspect } : {});
  actor.start();
  await toPromise(actor);
}

/**
 * Runs one session of agentloop's machine alone: `agentMachine` of a build (`build`: its dist module)
 * with `effects` bound (`instantEffects` by default), from AwaitingInput through one user message to
 * Completed.
 */
export async function runMachineSession(build, effects = instantEffects) {
  const actor = createActor(build.agentMachine, { input: { messages: [{ role: 'system', content: 's' }] } });
  build.bindAgentEffects(actor, effects);
  actor.start();
  await waitFor(actor, (s) => s.matches('AwaitingInput'));
  actor.send({ type: 'USER_MESSAGE', text: 'u', at: Date.now() });
  await waitFor(actor, (s) => s.matches('Completed'));
  actor.stop();
}
