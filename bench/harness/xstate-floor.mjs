// The design floor: the smallest XState v5 machine with the shape ../shared/DESIGN.md prescribes for
// agentloop, and none of agentloop's features (no events for UIs, no limits, no early tool starts,
// no retries, no redaction, no context window, no persistence).
//
// It is here to measure, in the same run as the others, what that shape costs by itself next to the
// hand-written loop: per model call, two promise actors (`callLlm`, then `runTools`), each with its
// own AbortController, whose signal the model call passes to the SDK, and two machine steps (each
// actor's done event, with its assign and transition), each making a new snapshot and context. What
// agentloop costs above this harness is its features and its own code; what this harness costs
// above the hand-written loop is the cost of the design.
//
// One machine per process (built once, in createHarness, which the worker calls once), one actor
// per session, one shared client. The request body and the assembly of a stream are those of
// lib/chat-calls.mjs (the hand-written loop's).
import { createComplete, runToolCalls } from '../lib/chat-calls.mjs';
import { fromPromise, OpenAI, setup } from '../lib/root-deps.mjs';
import {
  appendToolResults,
  hasToolCalls,
  initialContext,
  recordAnswer,
  runToCompletion,
} from '../lib/xstate-parts.mjs';

export const title = 'XState floor (design shape, no features)';

export async function createHarness({ baseURL, stream, fetch, onToolStart }) {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const complete = createComplete(client, { stream });

  /** The model call: the actor's signal goes to the SDK, so leaving Thinking aborts the request. */
  const callLlm = fromPromise(({ input: messages, signal }) => complete(messages, signal));

  /** The tool calls of one assistant message, in parallel; one `role: 'tool'` message each. */
  const runTools = fromPromise(({ input: calls }) => runToolCalls(calls, onToolStart));

  const machine = setup({ actors: { callLlm, runTools } }).createMachine({
    id: 'floor',
    context: initialContext,
    initial: 'Thinking',
    states: {
      Thinking: {
        invoke: {
          id: 'callLlm',
          src: 'callLlm',
          input: ({ context }) => context.messages,
          onDone: [
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

  return {
    /** Runs the task once; resolves with the number of model calls, rejects if the actor fails. */
    runSession: () => runToCompletion(machine),
  };
}
