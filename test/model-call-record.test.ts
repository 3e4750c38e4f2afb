/**
 * Recording ("the transcript is the cassette"): after each accepted model reply a saved session's
 * transcript holds a `model_call` event with where the call was, the hash of the request as sent, the
 * attempt answered, who answered and how long it took. Through the real SDK to the scripted server,
 * on both wires.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, MemorySessionStore, type TranscriptEntry } from '../src/index.js';
import { canonicalJson, canonicalSettings, requestHash } from '../src/llm/request-hash.js';
import { type ModelCallData, modelCallOf } from '../src/session/model-call-entry.js';
import { agentAt, eachWire, serve } from './support/harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

const toolTurns = {
  turns: [
    {
      toolCalls: [{ name: 'echo', arguments: { text: 'a' } }],
      usage: { prompt_tokens: 11, completion_tokens: 3 },
    },
    { toolCalls: [{ name: 'echo', arguments: { text: 'b' } }] },
    { content: 'done' },
  ],
};

function modelCalls(entries: readonly TranscriptEntry[]): ModelCallData[] {
  return entries.flatMap((entry) => {
    const data = modelCallOf(entry);
    if (typeof data === 'string') throw new Error(data);
    return data ? [data] : [];
  });
}

/** Runs one turn of a fresh saved session and returns its transcript. */
async function recordedTurn(
  scenario: Parameters<typeof serve>[0],
  options: Parameters<typeof agentAt>[1] = {},
): Promise<TranscriptEntry[]> {
  return (await recordedRun(scenario, options)).entries;
}

async function recordedRun(
  scenario: Parameters<typeof serve>[0],
  options: Parameters<typeof agentAt>[1] = {},
): Promise<{ entries: TranscriptEntry[]; server: Awaited<ReturnType<typeof serve>> }> {
  const server = await serve(scenario);
  const store = new MemorySessionStore();
  const agent = agentAt(server, { tools: [echo], store, session: 'rec', ...options });
  await agent.send('go');
  await agent.flush();
  agent.stop();
  return { entries: (await store.readTranscript('rec')).entries, server };
}

eachWire((api) => {
  describe('model_call entries', () => {
    it.each([true, false])('one per model call of a turn with tool calls (stream=%s)', async (stream) => {
      const { entries, server } = await recordedRun(toolTurns, { stream });
      const calls = modelCalls(entries);
      // The hash is of the body as it went over the wire (the server keeps Chat Completions bodies
      // as received; it shows Responses API bodies as their Chat Completions view).
      if (api === 'chat-completions') {
        expect(calls.map((c) => c.requestHash)).toEqual(server.requests.map((r) => requestHash(r)));
      }
      expect(calls.map((c) => [c.turn, c.iteration, c.attempt])).toEqual([
        [1, 1, 1],
        [1, 2, 1],
        [1, 3, 1],
      ]);
      expect(calls.map((c) => c.finishReason)).toEqual(['tool_calls', 'tool_calls', 'stop']);
      for (const call of calls) {
        expect(call.wire).toBe(api);
        expect(call.requestHash).toMatch(/^[0-9a-f]{64}$/);
        expect(call.responseId).toEqual(expect.any(String));
        expect(call.responseModel).toEqual(expect.any(String));
        expect(call.durationMs).toBeGreaterThanOrEqual(0);
        expect(call.firstChunkMs !== undefined).toBe(stream);
      }
      expect(calls[0]!.usage).toMatchObject({ promptTokens: 11, completionTokens: 3 });
      // Each call asked something new: the conversation grew.
      expect(new Set(calls.map((c) => c.requestHash)).size).toBe(3);
      // Each entry comes just before its reply's assistant message.
      const order = entries
        .filter((e) =>
          e.kind === 'event'
            ? e.event === 'model_call'
            : e.kind === 'message' && e.message.role === 'assistant',
        )
        .map((e) => e.kind);
      expect(order).toEqual(['event', 'message', 'event', 'message', 'event', 'message']);
    });

    it('the same request hashes the same, streamed or not; a changed system prompt does not', async () => {
      const system = 'You are a test.';
      const first = modelCalls(await recordedTurn(toolTurns, { instructions: system }));
      const again = modelCalls(await recordedTurn(toolTurns, { instructions: system, stream: false }));
      const changed = modelCalls(await recordedTurn(toolTurns, { instructions: 'You are another test.' }));
      expect(again.map((c) => c.requestHash)).toEqual(first.map((c) => c.requestHash));
      for (const [i, call] of changed.entries()) expect(call.requestHash).not.toBe(first[i]!.requestHash);
    });

    it('numbers the attempt answered after a retry', async () => {
      const scenario = {
        turns: [{ content: 'late', error: { status: 500, message: 'boom' }, times: 2 }],
      };
      const calls = modelCalls(await recordedTurn(scenario, { retry: { baseDelayMs: 1, maxDelayMs: 2 } }));
      expect(calls.map((c) => [c.iteration, c.attempt, c.finishReason])).toEqual([[1, 3, 'stop']]);
    });
  });
});

describe('requestHash', () => {
  it('gives the hashes recorded transcripts hold (pinned: remembering the tools text changed no hash)', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'echo',
          description: 'echoes',
          parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
      },
    ];
    const body = {
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: undefined,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: true,
    };
    const pinned = '166e02435fdd89a91f48d487821bd5c0a6c4b67b479ab68ce573a989d2d14aaa';
    expect(requestHash(body)).toBe(pinned);
    expect(requestHash(body)).toBe(pinned); // the tools text remembered
    expect(requestHash({ ...body, tools: structuredClone(tools) })).toBe(pinned);
    expect(requestHash({ model: 'm', input: 'text', tools: [] })).toBe(
      '46d37aa2761060f1683f47001d733d4270dea2aaae5b4397c1029d9400783a14',
    );
    expect(canonicalSettings({ b: 1, tools, a: undefined })).toBe(canonicalJson({ b: 1, tools }));
  });

  it('is the hash of canonical JSON: key order, undefined members and stream do not count', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };
    const same = {
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ content: 'hi', role: 'user', name: undefined }],
      model: 'm',
    };
    expect(requestHash(same)).toBe(requestHash(body));
    expect(requestHash({ ...body, temperature: 1 })).not.toBe(requestHash(body));
    expect(requestHash({ ...body, messages: [...body.messages, { role: 'user', content: 'hi' }] })).not.toBe(
      requestHash(body),
    );
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
  });

  it('hashes each message once, and a message in another position or of other content differently', () => {
    const a = { role: 'user', content: 'a' };
    const b = { role: 'assistant', content: 'b' };
    const first = requestHash({ model: 'm', input: [a, b] });
    // The digest of an item is remembered by identity; a structurally equal copy gives the same hash.
    expect(requestHash({ model: 'm', input: [a, b] })).toBe(first);
    expect(requestHash({ model: 'm', input: [{ ...a }, { ...b }] })).toBe(first);
    expect(requestHash({ model: 'm', input: [b, a] })).not.toBe(first);
    expect(requestHash({ model: 'm', input: [a, { ...b, content: 'c' }] })).not.toBe(first);
    // `messages` and `input` are different fields, and a non-object item still counts.
    expect(requestHash({ model: 'm', messages: [a, b] })).not.toBe(first);
    expect(requestHash({ model: 'm', input: [a, b, 'x'] })).not.toBe(first);
  });

  it('hashes a list sharing its first item with the last one as a fresh copy of it hashes', () => {
    const message = (i: number) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` });
    const system = { role: 'system', content: 'Be brief.' };
    const history = Array.from({ length: 12 }, (_, i) => message(i));
    /** The hash of a structurally equal list of new objects: no digest remembered from before. */
    const fresh = (items: object[]) => requestHash({ model: 'm', messages: structuredClone(items) });
    const check = (items: object[]) =>
      expect(requestHash({ model: 'm', messages: items })).toBe(fresh(items));
    check([system, ...history.slice(0, 4)]);
    check([system, ...history.slice(0, 6)]); // extends the last list
    check([system, ...history.slice(0, 6)]); // equal to it, another array
    check([system, ...history.slice(0, 3)]); // a prefix of it
    check([system, history[0]!, ...history.slice(3, 8)]); // the middle pruned
    check([system, { role: 'user', content: 'a block' }, ...history.slice(0, 8)]); // an item put in
    check([system]);
    // The same array changed in place is not taken for the list it was.
    const list = [system, ...history.slice(0, 5)];
    check(list);
    list[3] = message(99);
    check(list);
    list.push(message(100));
    check(list);
  });
});
