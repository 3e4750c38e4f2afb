/**
 * `replaySession` with `afterRecording`: a fork replayed up to its cut from the recording, then run
 * live against a second scripted server (its own scenario) through the real SDK. Tool runs are counted
 * where the tools run; requests are counted at the live server.
 */
import { describe, expect, it } from 'vitest';
import { Cassette, forkSession, type ReplayOptions, replaySession } from '../src/evals/index.js';
import { type AgentOptions, MemorySessionStore } from '../src/index.js';
import { eachWire, serve } from './support/harness.js';
import { countingEcho, recordSession } from './support/recorded-session.js';

/**
 * The live model: the scripted server picks a turn by the assistant messages in the request, so the
 * recorded replies come first (never asked for), then an echo call the recording does not hold, and
 * the answer. The live part uses the recorded agent's tools: another tool list would change the
 * recorded requests (strict replay would stop at the first).
 */
async function liveServer(first = 2) {
  return serve({
    turns: [
      ...Array.from({ length: first }, () => ({ content: 'not asked: the recording answers this' })),
      { toolCalls: [{ id: 'call_live', name: 'echo', arguments: { text: 'c' } }] },
      { content: 'echoed c' },
    ],
  });
}

/** How a test forks the recorded session and replays the fork. */
interface ForkReplay {
  /** The rest point: after turn 1's answer, or after its tool batch (mid-turn). */
  cut: 'done' | 'lastResult';
  /** The fork's new user message. */
  message?: string;
  /** The replay's options (over an agent with the recorded tools and a live server after the recording). */
  options?: (liveURL: string) => Partial<ReplayOptions>;
  agent?: Partial<AgentOptions>;
}

/**
 * Session `orig` recorded (turn 1: two echo calls, then "done"), forked at `cut`, and the fork replayed
 * with a second scripted server as the live model after the recording.
 */
async function replayFork({ cut, message, options, agent = {} }: ForkReplay) {
  const store = new MemorySessionStore();
  const { seq } = await recordSession(store);
  const fork = await forkSession(store, 'orig', { at: seq[cut], ...(message ? { message } : {}) });
  const live = await liveServer(cut === 'done' ? 2 : 1);
  const echo = countingEcho();
  const replay = await replaySession(await Cassette.fromSession(store, fork.id), {
    agent: { instructions: 'be nice', tools: [echo.tool], ...agent },
    afterRecording: { baseURL: live.url, apiKey: 'live-key' },
    ...options?.(live.url),
  });
  return { replay, live, echo };
}

eachWire(() => {
  it('replays a fork up to its cut from the recording, then answers its new message live', async () => {
    const { replay, live, echo } = await replayFork({
      cut: 'done',
      message: 'now echo c',
      options: (url) => ({ afterRecording: { baseURL: url, apiKey: 'live-key', model: 'live-model' } }),
    });

    expect(replay.divergence).toBeUndefined();
    expect(replay.ok).toBe(true);
    expect(replay.modelCalls).toBe(2); // answered by the cassette
    expect(replay.liveCalls).toBe(2);
    expect(live.requestCount).toBe(2);
    expect(replay.liveFrom).toEqual({ step: 3, turn: 2 });
    expect(echo.runs).toEqual(['c']); // before the cut: the recorded results; after it, for real, once
    expect(live.requests.map((r) => r.model)).toEqual(['live-model', 'live-model']);
    // The live model got the replayed conversation, the recorded tool results included.
    expect(JSON.stringify(live.requests[0]?.messages)).toContain('echo: a');
    expect(replay.turns.map((t) => [t.input, t.result.response])).toEqual([
      ['go', 'done'],
      ['now echo c', 'echoed c'],
    ]);
    expect(replay.trajectory.map((c) => [c.name, c.args])).toEqual([
      ['echo', { text: 'a' }],
      ['echo', { text: 'b' }],
      ['echo', { text: 'c' }],
    ]);
  });
});

describe('replaySession with afterRecording', () => {
  it('goes live inside a turn when the recording ends after a tool batch', async () => {
    const { replay, live, echo } = await replayFork({
      cut: 'lastResult',
      options: () => ({ tools: 'live' }),
    });

    expect(replay.divergence).toBeUndefined();
    expect(replay.liveFrom).toEqual({ step: 2, turn: 1 });
    expect([replay.modelCalls, replay.liveCalls, live.requestCount]).toEqual([1, 2, 2]);
    // tools: 'live' runs the recorded part's tools too (their results match the recording).
    expect(echo.runs).toEqual(['a', 'b', 'c']);
    expect(replay.result?.response).toBe('echoed c');
  });

  it('stops at a divergence inside the recorded part: nothing goes live', async () => {
    const { replay, live, echo } = await replayFork({
      cut: 'done',
      message: 'now echo c',
      agent: { instructions: 'be rude' },
    });

    expect(replay.ok).toBe(false);
    expect(replay.divergence).toMatchObject({ kind: 'request', step: 1, path: 'messages[0].content' });
    expect(replay.liveFrom).toBeUndefined();
    expect(replay.liveCalls).toBe(0);
    expect(live.requestCount).toBe(0);
    expect(echo.runs).toEqual([]);
  });

  it('asks the approve function about live calls; as recorded, it declines them with a warning', async () => {
    const agent = { approval: 'always' as const };
    const declined = await replayFork({ cut: 'done', message: 'now echo c', agent });
    expect(declined.replay.ok).toBe(true);
    expect(declined.echo.runs).toEqual([]);
    expect(declined.replay.warnings.at(-1)).toMatch(
      /^tool call call_live \(echo\): asked for approval in the live part; declined \(pass approve to answer\)$/,
    );

    const asked: string[] = [];
    const approved = await replayFork({
      cut: 'done',
      message: 'now echo c',
      agent,
      options: () => ({
        approve: (call) => {
          asked.push(call.toolCallId);
          return true;
        },
      }),
    });
    expect(approved.echo.runs).toEqual(['c']);
    expect(asked.at(-1)).toBe('call_live');
  });

  it('refuses a live model it cannot reach, naming the key', async () => {
    const store = new MemorySessionStore();
    await recordSession(store);
    const cassette = await Cassette.fromSession(store, 'orig');
    await expect(replaySession(cassette, { agent: {}, afterRecording: {} })).rejects.toThrow(
      'afterRecording needs a baseURL or an apiKey',
    );
    await expect(replaySession(cassette, { agent: {}, afterRecording: { baseURL: '' } })).rejects.toThrow(
      'afterRecording.baseURL must be a non-empty string',
    );
  });
});
