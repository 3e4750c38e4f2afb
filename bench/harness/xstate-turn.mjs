// What would meet the serial target, measured: the loop of one turn runs inside one promise actor
// (model call, tools, model call, ... until an answer), and the machine hears of each round trip
// through one `STEP` event that appends its messages, so its context (what a UI, the inspector or
// persistence read) stays current. Per model call: no actor and one machine step, against the
// floor's two actors and two steps. Approval, interrupt and limits would have to become the turn
// actor's business or events into it: this is a different design from DESIGN.md's, kept here only to
// measure it. Request and tool runs are the hand-written loop's (lib/chat-calls.mjs).
//
// Not in `npm run bench`; run it with
//   node bench/run.mjs --only=serial --rounds=4 --harnesses=handwritten,xstate-floor,xstate-turn
import { assistantMessage, createComplete, runToolCalls } from '../lib/chat-calls.mjs';
import { assign, fromPromise, OpenAI, setup } from '../lib/root-deps.mjs';
import { initialContext, runToCompletion } from '../lib/xstate-parts.mjs';

export const title = 'XState, one actor per turn (opt-in)';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const complete = createComplete(client, { stream });

  /** One turn: model calls and tool runs until an answer; each round trip is reported as a STEP. */
  const runTurn = fromPromise(async ({ input, signal, self }) => {
    const messages = [...input];
    for (let calls = 1; ; calls++) {
      const message = await complete(messages, signal);
      const toolCalls = message.tool_calls ?? [];
      const step = [assistantMessage(message), ...(await runToolCalls(toolCalls, onToolStart))];
      messages.push(...step);
      self._parent?.send({ type: 'STEP', messages: step });
      if (toolCalls.length === 0) return calls;
    }
  });

  const machine = setup({ actors: { runTurn } }).createMachine({
    id: 'turn',
    context: initialContext,
    initial: 'Running',
    states: {
      Running: {
        invoke: {
          id: 'runTurn',
          src: 'runTurn',
          input: ({ context }) => context.messages,
          onDone: { target: 'Done', actions: assign(({ event }) => ({ calls: event.output })) },
        },
        on: {
          STEP: {
            actions: assign(({ context, event }) => ({ messages: [...context.messages, ...event.messages] })),
          },
        },
      },
      Done: { type: 'final' },
    },
    output: ({ context }) => context.calls,
  });

  return {
    /** Runs the task once; resolves with the number of model calls, rejects if the actor fails. */
    runSession: () => runToCompletion(machine),
  };
}
