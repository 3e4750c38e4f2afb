/**
 * The work a model call does, counted (not timed): serializations, hashes, event objects built and
 * copies of the message array, through the real code (the SDK over HTTP to the scripted server), for
 * an agent that nobody listens to, one with a listener and one whose session is saved. The counts are
 * exact: a change that adds work to every model call fails here until the numbers below are updated,
 * with the reason next to them (issue 37; timed figures are in bench/README.md).
 */
import { EventEmitter } from 'eventemitter3';
import { describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../src/index.js';
import { type WorkCounts, workSnapshot } from '../src/work-counters.js';
import { countingAbortControllers } from './support/abort-controller-count.js';
import { agentAt, serve } from './support/harness.js';
import { echoTwiceScenario, progressEcho } from './support/progress-echo.js';

/** What the counters moved by while `work` ran. */
async function counted(work: () => Promise<void>): Promise<WorkCounts> {
  const before = workSnapshot();
  await work();
  const after = workSnapshot();
  return {
    serializations: after.serializations - before.serializations,
    hashes: after.hashes - before.hashes,
    events: after.events - before.events,
    messageCopies: after.messageCopies - before.messageCopies,
    contextUpdates: after.contextUpdates - before.contextUpdates,
  };
}

/** Runs the turn on a fresh agent with `options`; the counts of `send` (the turn) alone. */
async function turnWork(
  stream: boolean,
  options: Parameters<typeof agentAt>[1] = {},
  listen?: (agent: ReturnType<typeof agentAt>) => void,
  onStart?: () => void,
): Promise<WorkCounts> {
  const server = await serve(echoTwiceScenario);
  const agent = agentAt(server, { tools: [progressEcho], stream, ...options });
  listen?.(agent);
  await agent.ready();
  let result: Awaited<ReturnType<typeof agent.send>> | undefined;
  const work = await counted(async () => {
    onStart?.();
    result = await agent.send('go');
  });
  expect(result?.success).toBe(true);
  expect(result?.iterations).toBe(3);
  await agent.flush();
  return work;
}

/**
 * The copies of the message array every turn of this shape makes, whatever is on: the user message
 * appended (1), each of the 3 replies appended (3), each of the 2 tool results appended (2). The
 * conversation is append-only and an assign must give XState a new array (docs/agent-loop.md).
 */
const APPENDS = 6;

/**
 * The context updates (XState assigns, each a new context and a new machine snapshot: under 1,000
 * sessions at once what a call allocates is promoted, so each costs wall time, bench/README.md issue
 * 37) the turn's actions make: the user message with the turn's fields (1), entering Thinking for the
 * first call (1), each reply with tool calls, its runner spawned in the same update (2), each closed
 * batch, entering Thinking for the next call in the same update (2), the answer (1), the turn's end
 * (1) and entering Completed (1): 9. Before issue 37's cut, 11 (Thinking's entry updated the context
 * again after each closed batch) and two more snapshots for the runners' `spawnChild`. A streamed call
 * adds one per text delta (`streamDelta`) read before the stream's end, and, only when someone reads
 * `content_chunk`, one for the text that came with the end (the reply carries it; agentcpu): the
 * answer here comes in one read with its end, so it adds one for a listener and none otherwise.
 */
function contextUpdates(stream: boolean, chunksHeard = false): number {
  return 9 + (stream && chunksHeard ? 1 : 0);
}

/**
 * What hashing the 3 requests of the turn costs (src/llm/request-hash.ts), when something reads the
 * hash. Serializations: the body without its conversation, once per request (3); the tools array,
 * once per tools array (1); each message once (1 user message, then 2 new messages before each later
 * call: 5). Hashes: each message's digest and the chain's step over it (2 x 5) and the request (3).
 */
const HASHED = { serializations: 3 + 1 + 5, hashes: 2 * 5 + 3 };

describe('the work of a model call, counted', () => {
  it.each([false, true])(
    'an agent nobody listens to: no hash, no serialization, one event (stream=%s)',
    async (stream) => {
      expect(await turnWork(stream)).toEqual({
        serializations: 0,
        hashes: 0,
        // `turn_end`: the agent settles `send()` on it. Nothing else is built.
        events: 1,
        messageCopies: APPENDS,
        contextUpdates: contextUpdates(stream),
      });
    },
  );

  it.each([false, true])(
    'a listener of every event: the events it hears, built once (stream=%s)',
    async (stream) => {
      const seen: string[] = [];
      let counting = false;
      const work = await turnWork(
        stream,
        {},
        (agent) =>
          agent.on('*', (e) => {
            if (counting) seen.push(e.type);
          }),
        () => {
          counting = true;
        },
      );
      const modelCalls = seen.filter((t) => t === 'model_call').length;
      expect(modelCalls).toBe(3);
      expect(seen.filter((t) => t === 'tool_progress')).toHaveLength(2);
      expect(work).toEqual({
        ...HASHED,
        // Each event once, and each `model_call` once more: the relay gives listeners a copy without the
        // request's settings (tool schemas and all).
        events: seen.length + modelCalls,
        messageCopies: APPENDS,
        contextUpdates: contextUpdates(stream, true),
      });
    },
  );

  it.each([false, true])(
    'a saved session: model_call entries with their hash, no other event built (stream=%s)',
    async (stream) => {
      const store = new MemorySessionStore();
      const work = await turnWork(stream, { store, session: 'work' });
      expect(work).toEqual({
        // The hashes, and one more serialization: the session writes the request's settings (a
        // `request_settings` entry) at the first call; later calls with the same values (by identity)
        // are not serialized again to be compared.
        serializations: HASHED.serializations + 1,
        hashes: HASHED.hashes,
        // The 3 `model_call` events the transcript records, and `turn_end`.
        events: 3 + 1,
        messageCopies: APPENDS,
        contextUpdates: contextUpdates(stream),
      });
      const entries = (await store.readTranscript('work')).entries;
      const recorded = entries.filter((e) => e.kind === 'event' && e.event === 'model_call');
      expect(recorded).toHaveLength(3);
      for (const entry of recorded)
        expect((entry as { data: { requestHash: string } }).data.requestHash).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it.each([false, true])(
    'an agent nobody listens to asks its bus nothing per event (stream=%s)',
    async (stream) => {
      const server = await serve(echoTwiceScenario);
      const agent = agentAt(server, { tools: [progressEcho], stream });
      await agent.ready();
      const lookups = vi.spyOn(EventEmitter.prototype, 'listenerCount');
      try {
        expect((await agent.send('go')).iterations).toBe(3);
        // The machine asks whether each event it could build is heard (`hears`): an empty bus answers
        // from its flag (src/events/event-bus.ts). Before llm36 this turn made 78 look-ups (84 streamed).
        expect(lookups).not.toHaveBeenCalled();
      } finally {
        lookups.mockRestore();
      }
      await agent.flush();
    },
  );

  it.each([false, true])(
    'abort controllers: one a model call of ours, and those of the SDK and fetch for its request (stream=%s)',
    async (stream) => {
      const server = await serve(echoTwiceScenario);
      const agent = agentAt(server, { tools: [progressEcho], stream });
      await agent.ready();
      const { made } = await countingAbortControllers(async () => {
        expect((await agent.send('go')).iterations).toBe(3);
      });
      await agent.flush();
      // Per model call (3): the attempt's controller, which the effect's stop, the deadline and the
      // stream's idle cut all abort (src/llm/call-abort.ts), then the SDK's own for the request and the
      // one fetch's `Request` makes. Before lean36 a streamed call made one more of ours (the effect's,
      // because callLlm read `io.signal`, and the stream reader's idle controller listening on it). The
      // tool batches make none (they hear a stop notice).
      expect(made).toBe(3 * 3);
    },
  );
});
