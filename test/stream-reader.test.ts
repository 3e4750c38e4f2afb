/**
 * Reading one stream (`readCompletionStream`, `readResponsesStream`) through the real `openai` SDK
 * over HTTP to a raw server that writes chunks with pauses between them: the idle timer (re-armed for
 * what is left of the window, so pauses shorter than it never cut, however many), aborts, a stream
 * that ends without a finish reason, and what listeners hear per network read.
 */
import { getEventListeners } from 'node:events';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { StreamCutError } from '../src/llm/error-classification.js';
import type { ModelToolCall } from '../src/llm/model-reply.js';
import { readResponsesStream } from '../src/llm/responses-stream.js';
import { readCompletionStream, type StreamReadOptions } from '../src/llm/stream-reader.js';
import { startScriptedServer } from '../src/testing/index.js';
import { chunk, type RawReply, startRawModelServer } from './support/raw-model-server.js';

const body = { model: 'm', messages: [{ role: 'user' as const, content: 'go' }] };
const scope = { usedCallIds: new Set<string>(), callIdStem: 'call_s1' };

/** Reads one streamed reply of the raw server; what the listeners heard, in order. */
async function read(reply: RawReply, options: Partial<StreamReadOptions> = {}) {
  const server = await startRawModelServer([reply]);
  const client = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
  const heard: string[] = [];
  const completion = readCompletionStream(client, body, {
    signal: new AbortController().signal,
    idleMs: 5_000,
    scope,
    onText: (t) => heard.push(`text ${t}`),
    onCallReady: (c: ModelToolCall) => heard.push(`ready ${c.id}`),
    ...options,
  });
  return { completion, heard, server };
}

const text = (t: string) => chunk({ content: t });
const callBegins = (index: number, id: string) =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name: 'f', arguments: '{}' } }] });

describe('the idle timer', () => {
  it('cuts a stream silent for longer than the window, naming the window', async () => {
    const { completion } = await read({ sse: [text('a'), { pauseMs: 400 }, text('b')] }, { idleMs: 100 });
    const error = await completion.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamCutError);
    expect((error as Error).message).toContain('100 ms');
  });

  it('cuts a window after the last data, not later (the timer re-armed for what is left of it)', async () => {
    const heardAt: number[] = [];
    const { completion } = await read(
      { sse: [text('a'), { pauseMs: 3_000 }, text('b')] },
      { idleMs: 300, onText: () => heardAt.push(Date.now()) },
    );
    const error = await completion.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamCutError);
    expect(heardAt).toHaveLength(1);
    expect(Date.now() - heardAt[0]!).toBeLessThan(600);
  });

  it('cuts a server that never sends a byte', async () => {
    const server = await startScriptedServer({ scenario: { turns: [{ content: 'x', fault: 'hang' }] } });
    try {
      const client = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
      const started = Date.now();
      const reading = readCompletionStream(client, body, {
        signal: new AbortController().signal,
        idleMs: 150,
        scope,
      });
      await expect(reading).rejects.toBeInstanceOf(StreamCutError);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await server.close();
    }
  });

  it('never cuts a stream whose pauses are each shorter than the window, however long it runs', async () => {
    const sse: unknown[] = [];
    for (const part of ['a', 'b', 'c', 'd', 'e', 'f']) sse.push(text(part), { pauseMs: 200 });
    sse.push(chunk({}, 'stop'));
    const started = Date.now();
    const { completion } = await read({ sse }, { idleMs: 800 });
    expect((await completion).content).toBe('abcdef');
    // Over twice the window in all: the timer was re-armed, not fired once at its start.
    expect(Date.now() - started).toBeGreaterThan(1_100);
  });
});

describe('how a read ends', () => {
  it("rejects with the signal's reason when it aborts mid-stream, and leaves no listener on it", async () => {
    const controller = new AbortController();
    const { completion, heard } = await read(
      { sse: [text('a'), { pauseMs: 2_000 }, text('b'), chunk({}, 'stop')] },
      { signal: controller.signal },
    );
    const reason = new Error('user pressed stop');
    setTimeout(() => controller.abort(reason), 150);
    await expect(completion).rejects.toBe(reason);
    expect(heard).toEqual(['text a']);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the reason of a signal aborted before it began, sending nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('already stopped');
    controller.abort(reason);
    const { completion, server } = await read(
      { sse: [text('a'), chunk({}, 'stop')] },
      {
        signal: controller.signal,
      },
    );
    await expect(completion).rejects.toBe(reason);
    expect(server.requests).toHaveLength(0);
  });

  it('removes its abort listener when the stream completes', async () => {
    const controller = new AbortController();
    const { completion } = await read({ sse: [text('a'), chunk({}, 'stop')] }, { signal: controller.signal });
    await completion;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('is a cut when the stream ends without a finish reason', async () => {
    const { completion } = await read({ sse: [text('half')] });
    const error = await completion.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamCutError);
    expect((error as Error).message).not.toMatch(/ms$/);
  });

  it('names who answered and how long the first chunk took', async () => {
    const { completion } = await read({
      sse: [{ pauseMs: 60 }, { ...text('hi'), id: '' }, chunk({}, 'stop', { id: 'later', model: 'other' })],
    });
    const done = await completion;
    // The first chunk's identity is kept (a later one does not replace it).
    expect(done).toMatchObject({
      content: 'hi',
      finishReason: 'stop',
      responseId: '',
      responseModel: 'raw-model',
    });
    expect(done.firstChunkMs).toBeGreaterThanOrEqual(50);
    expect(done.firstChunkMs).toBeLessThan(10_000);
  });
});

describe('what listeners hear', () => {
  it("tells each network read's text as one delta, then the calls it made ready", async () => {
    const { completion, heard } = await read({
      sse: [
        text('Let '),
        text('me '),
        callBegins(0, 'a'),
        { pauseMs: 80 },
        text('see.'),
        callBegins(1, 'b'),
        { pauseMs: 80 },
        callBegins(2, 'c'),
        { pauseMs: 80 },
        chunk({}, 'tool_calls'),
      ],
    });
    const done = await completion;
    expect(heard).toEqual(['text Let me ', 'text see.', 'ready a', 'ready b']);
    // `c` became ready in the read that ended the stream: the end carries it, unannounced.
    expect(done.calls.map((c) => c.id)).toEqual(['a', 'b', 'c']);
    expect(done.content).toBe('Let me see.');
  });

  it('tells the text of the last read before the stream resolves', async () => {
    const { completion, heard } = await read({ sse: [text('a'), text('b'), chunk({}, 'stop')] });
    await completion;
    expect(heard).toEqual(['text ab']);
  });

  it('drops the text still pending when the stream fails', async () => {
    const { completion, heard } = await read({ sse: [text('lost'), chunk({ content: 5 })] });
    await expect(completion).rejects.toThrow(/choices\[0\]\.delta\.content/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual([]);
  });

  it('reads without listeners', async () => {
    const { completion } = await read(
      { sse: [text('a'), callBegins(0, 'x'), callBegins(1, 'y'), chunk({}, 'tool_calls')] },
      { onText: undefined, onCallReady: undefined },
    );
    expect((await completion).calls).toHaveLength(2);
  });
});

describe('readResponsesStream', () => {
  it('reads the events of a Responses stream, with the identity of the response', async () => {
    const created = {
      type: 'response.created',
      response: { id: 'resp_9', model: 'gpt-x', status: 'in_progress' },
    };
    const delta = { type: 'response.output_text.delta', output_index: 0, delta: 'hello' };
    const completed = {
      type: 'response.completed',
      response: {
        id: 'resp_9',
        status: 'completed',
        output: [],
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    };
    const server = await startRawModelServer([{ sse: [created, delta, completed], done: false }]);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const heard: string[] = [];
    const done = await readResponsesStream(
      client,
      { model: 'm', input: 'go' },
      { signal: new AbortController().signal, idleMs: 5_000, scope, onText: (t) => heard.push(t) },
    );
    expect(done).toMatchObject({
      content: 'hello',
      responseId: 'resp_9',
      responseModel: 'gpt-x',
      finishReason: 'stop',
    });
    expect(heard).toEqual(['hello']);
    expect(server.requests[0]).toMatchObject({ stream: true, input: 'go' });
  });
});
