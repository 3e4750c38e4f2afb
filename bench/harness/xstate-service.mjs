// The statechart of xstate-floor.mjs with its effects moved into one long-lived actor per session
// (`fromCallback`, invoked at the root) that the states talk to with events, instead of a promise
// actor made, started and stopped per model call and per tool batch. Each model call still gets an
// AbortController (leaving Thinking aborts the request through it); the request body and stream
// assembly are the hand-written loop's (lib/chat-calls.mjs).
//
// It asks whether the per-call actor lifecycle is what the floor's cost is made of. Measured
// (bench/results/service.json, 4 interleaved rounds): no, it costs what the floor does (1.14-1.26x
// the hand-written loop against the floor's 1.18-1.21x in two such runs), so the cost is the
// interpreter's steps and allocations, not the actors. Not in `npm run bench`; run it with
//   node bench/run.mjs --only=serial --rounds=4 --harnesses=handwritten,agentloop,xstate-floor,xstate-service
import { createComplete, runToolCalls } from '../lib/chat-calls.mjs';
import { assign, fromCallback, OpenAI, sendTo, setup } from '../lib/root-deps.mjs';
import {
  appendToolResults,
  hasToolCalls,
  initialContext,
  recordAnswer,
  runToCompletion,
} from '../lib/xstate-parts.mjs';

export const title = 'XState, one service actor per session';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const complete = createComplete(client, { stream });

  /** The session's service: answers LLM and TOOLS requests with LLM.DONE / TOOLS.DONE (or FAILED). */
  const effects = fromCallback(({ sendBack, receive }) => {
    let current;
    receive((event) => {
      if (event.type === 'ABORT') return current?.abort();
      current = new AbortController();
      const work =
        event.type === 'LLM'
          ? complete(event.messages, current.signal)
          : runToolCalls(event.calls, onToolStart);
      work.then(
        (output) => sendBack({ type: `${event.type}.DONE`, output }),
        (error) => sendBack({ type: 'FAILED', error }),
      );
    });
    return () => current?.abort();
  });

  const machine = setup({ actors: { effects } }).createMachine({
    id: 'service',
    context: () => ({ ...initialContext(), error: null }),
    invoke: { id: 'effects', src: 'effects' },
    initial: 'Thinking',
    on: { FAILED: { target: '.Failed', actions: assign(({ event }) => ({ error: event.error })) } },
    states: {
      Thinking: {
        entry: sendTo('effects', ({ context }) => ({ type: 'LLM', messages: context.messages })),
        exit: sendTo('effects', { type: 'ABORT' }),
        on: {
          'LLM.DONE': [
            { guard: hasToolCalls, target: 'ExecutingTool', actions: recordAnswer },
            { target: 'Done', actions: recordAnswer },
          ],
        },
      },
      ExecutingTool: {
        entry: sendTo('effects', ({ context }) => ({ type: 'TOOLS', calls: context.toolCalls })),
        on: { 'TOOLS.DONE': { target: 'Thinking', actions: appendToolResults } },
      },
      Done: { type: 'final' },
      Failed: { type: 'final' },
    },
    output: ({ context }) => {
      if (context.error) throw context.error;
      return context.calls;
    },
  });

  return {
    /** Runs the task once; resolves with the number of model calls, rejects if a call failed. */
    runSession: () => runToCompletion(machine),
  };
}
