// An experiment beside the XState floor (issue 37, wall37; not in bench/run.mjs's figures): the same
// machine with one long-lived model-call actor per session instead of an invoked actor per call. The
// actor (a `fromCallback` invoked at the root) receives `CALL` on Thinking's entry and `STOP` on its
// exit, and sends the answer back as `LLM.DONE`. It measures what the per-call actor costs the floor:
//   node --expose-gc bench/alloc-per-call.mjs xstate-floor-call-actor   (and bench/worker.mjs concurrent)
// Figures in bench/README.md ("wall37").
import { createComplete, runToolCalls } from '../lib/chat-calls.mjs';
import { fromCallback, fromPromise, OpenAI, sendTo, setup } from '../lib/root-deps.mjs';
import {
  appendToolResults,
  hasToolCalls,
  initialContext,
  recordAnswer,
  runToCompletion,
} from '../lib/xstate-parts.mjs';

export const title = 'XState floor, one model-call actor per session';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const complete = createComplete(client, { stream });

  /** The session's model calls: one at a time, the current one aborted by `STOP` or the actor's end. */
  const callLlm = fromCallback(({ sendBack, receive }) => {
    let current;
    receive((ev) => {
      if (ev.type === 'CALL') {
        const controller = new AbortController();
        current = controller;
        complete(ev.messages, controller.signal).then((output) => {
          if (current === controller) sendBack({ type: 'LLM.DONE', output });
        });
      } else if (ev.type === 'STOP') {
        current?.abort();
        current = undefined;
      }
    });
    return () => current?.abort();
  });
  const runTools = fromPromise(({ input: calls }) => runToolCalls(calls, onToolStart));

  const machine = setup({ actors: { callLlm, runTools } }).createMachine({
    id: 'floor',
    context: initialContext,
    initial: 'Thinking',
    invoke: { id: 'callLlm', src: 'callLlm' },
    states: {
      Thinking: {
        entry: sendTo('callLlm', ({ context }) => ({ type: 'CALL', messages: context.messages })),
        exit: sendTo('callLlm', { type: 'STOP' }),
        on: {
          'LLM.DONE': [
            { guard: hasToolCalls, target: 'ExecutingTool', actions: recordAnswer },
            { target: 'Done', actions: recordAnswer },
          ],
        },
      },
      ExecutingTool: {
        invoke: {
          id: 'runTools',
          src: 'runTools',
          input: ({ context }) => context.toolCalls,
          onDone: { target: 'Thinking', actions: appendToolResults },
        },
      },
      Done: { type: 'final' },
    },
    output: ({ context }) => context.calls,
  });

  return { runSession: () => runToCompletion(machine) };
}
