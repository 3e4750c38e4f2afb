/**
 * `callModel`, the llm layer's one model call, used on its own (no machine, no tool registry): the
 * real SDK over HTTP against the scripted server.
 */
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { DeadlineExceededError, type StopNotice } from '../src/llm/call-abort.js';
import { callModel } from '../src/llm/model-call.js';
import type { ModelToolCall } from '../src/llm/model-reply.js';
import type { ModelOptions, ModelRequest } from '../src/llm/model-request.js';
import { LlmCallError } from '../src/llm/retry-policy.js';
import { callIdsIn } from '../src/llm/tool-call-ids.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';

const tools: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } },
];

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(scenario: Scenario, options: Partial<ModelOptions> = {}) {
  server = await startScriptedServer({ scenario });
  const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
  const heard: string[] = [];
  const ready: ModelToolCall[] = [];
  const io = {
    signal: new AbortController().signal,
    onText: (delta: string) => heard.push(`text ${delta}`),
    onCallReady: (call: ModelToolCall) => ready.push(call),
    onRetry: (info: { attempt: number; maxAttempts: number; error: { kind: string } }) =>
      heard.push(`retry ${info.attempt}/${info.maxAttempts} ${info.error.kind}`),
    onReset: (info: { reason: string; attempt: number }) =>
      heard.push(`reset ${info.reason} ${info.attempt}`),
  };
  const request = (over: Partial<ModelRequest> = {}): ModelRequest => {
    const messages = over.messages ?? [{ role: 'user', content: 'go' }];
    return {
      messages,
      tools,
      toolsEnabled: true,
      deadline: null,
      usedCallIds: callIdsIn(messages),
      callIdStem: `call_m${messages.length}`,
      ...over,
    };
  };
  const model: ModelOptions = { client, model: 'm', retry: { baseDelayMs: 1, jitter: 'none' }, ...options };
  return { server, heard, ready, io, request, model };
}

describe('callModel', () => {
  it('streams text, announces certain calls with their final ids, and resolves with the message', async () => {
    const { heard, ready, io, request, model } = await setup({
      turns: [
        {
          content: 'On it.',
          toolCalls: [
            { id: 'a', name: 'f', arguments: { x: 1 } },
            { id: 'a', name: 'f', arguments: { x: 2 } },
          ],
          // Chunks apart in time: each call is ready in a network read before the stream's end.
          chunkDelayMs: 5,
        },
      ],
    });
    const reply = await callModel(model, request(), io);
    expect(heard.join('')).toContain('On');
    expect(ready).toEqual(reply.calls);
    expect(reply.calls).toEqual([
      { id: 'a', name: 'f', argsText: '{"x":1}' },
      { id: 'call_m1_1', name: 'f', argsText: '{"x":2}' },
    ]);
    expect(reply.message).toEqual({
      role: 'assistant',
      content: 'On it.',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
        { id: 'call_m1_1', type: 'function', function: { name: 'f', arguments: '{"x":2}' } },
      ],
    });
    expect(reply.finishReason).toBe('tool_calls');
    expect(reply.usage?.totalTokens).toBeGreaterThan(0);
  });

  it('does not announce calls that become ready in the read that ends the stream (the end carries them)', async () => {
    const { ready, io, request, model } = await setup({
      turns: [{ toolCalls: [{ id: 'a', name: 'f', arguments: { x: 1 } }] }],
    });
    const reply = await callModel(model, request(), io);
    expect(reply.calls).toEqual([{ id: 'a', name: 'f', argsText: '{"x":1}' }]);
    expect(ready).toEqual([]);
  });

  it('gives the same reply without streaming, announcing nothing', async () => {
    const { ready, io, request, model } = await setup(
      { turns: [{ toolCalls: [{ id: '', name: 'f', arguments: {} }] }] },
      { stream: false },
    );
    const reply = await callModel(model, request(), io);
    expect(ready).toEqual([]);
    expect(reply.calls).toEqual([{ id: 'call_m1_0', name: 'f', argsText: '{}' }]);
    expect(reply.message.content).toBeNull();
  });

  it("sends tool_choice 'none' and drops the calls when tools are disabled", async () => {
    const { server, ready, io, request, model } = await setup({
      // Two calls, chunks apart in time: the first would be ready mid-stream if calls were read.
      turns: [
        () => ({
          content: 'answer',
          toolCalls: [
            { name: 'f', arguments: {} },
            { name: 'f', arguments: {} },
          ],
          chunkDelayMs: 5,
        }),
      ],
    });
    const reply = await callModel(model, request({ toolsEnabled: false }), io);
    expect(server.requests[0]!.tool_choice).toBe('none');
    expect(ready).toEqual([]);
    expect(reply.calls).toEqual([]);
    expect(reply.message).toEqual({ role: 'assistant', content: expect.any(String) });
  });

  it('reads calls and reasoning from the text in XML mode', async () => {
    const content = '<thinking>need f</thinking><tool>{"tool_name":"f","arguments":{"x":1}}</tool>';
    const { server, ready, io, request, model } = await setup(
      { turns: [{ content }] },
      { toolFormat: 'xml' },
    );
    const reply = await callModel(model, request({ callIdStem: 'xml_1_1' }), io);
    expect(server.requests[0]!.tools).toBeUndefined();
    expect(ready).toEqual([]);
    expect(reply.calls).toEqual([{ id: 'xml_1_1_0', name: 'f', argsText: '{"x":1}' }]);
    expect(reply.reasoning).toBe('need f');
  });

  it('tells retries and resets, then resolves with the retried answer', async () => {
    const { heard, io, request, model } = await setup({
      turns: [{ content: 'fine', fault: 'cut-mid-text', times: 1 }],
    });
    const reply = await callModel(model, request(), io);
    expect(reply.message.content).toBe('fine');
    expect(heard.filter((h) => !h.startsWith('text'))).toEqual(['retry 1/4 stream_cut', 'reset retry 2']);
  });

  it('rejects with a DeadlineExceededError when the deadline passes', async () => {
    const { io, request, model } = await setup({ turns: [{ content: 'never', fault: 'hang' }] });
    const error = await callModel(model, request({ deadline: Date.now() + 100 }), io).catch((e) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    // The code the agent machine ends the turn on (agent-machine.ts).
    expect(error).toMatchObject({ code: 'deadline_exceeded' });
    // It says what happened (the turn's error event shows it).
    expect((error as Error).message).not.toBe('');
  });

  it('gives up with an LlmCallError on an error that is not retryable', async () => {
    const { io, request, model } = await setup({ turns: [{ error: { status: 400 } }] });
    await expect(callModel(model, request(), io)).rejects.toBeInstanceOf(LlmCallError);
  });

  it("rejects with the caller's reason when the caller aborts, even with a deadline set", async () => {
    const { io, request, model } = await setup({ turns: [{ content: 'never', fault: 'hang' }] });
    const controller = new AbortController();
    const reason = new Error('stopped by the user');
    setTimeout(() => controller.abort(reason), 50);
    await expect(
      callModel(model, request({ deadline: Date.now() + 5_000 }), { ...io, signal: controller.signal }),
    ).rejects.toBe(reason);
  });

  it('rejects at once with a DeadlineExceededError when the deadline has already passed', async () => {
    const { server, io, request, model } = await setup({ turns: [{ content: 'late' }] });
    const started = Date.now();
    await expect(callModel(model, request({ deadline: Date.now() - 1_000 }), io)).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(0);
  });

  it('gives up before a retry whose wait would pass the deadline', async () => {
    const { io, request, model } = await setup(
      { turns: [{ error: { status: 500 } }] },
      { retry: { baseDelayMs: 60_000, jitter: 'none' } },
    );
    const started = Date.now();
    const error = await callModel(model, request({ deadline: Date.now() + 3_000 }), io).catch((e) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect((error as LlmCallError).kind).toBe('server');
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('cuts a silent stream after streamIdleTimeoutMs and retries it', async () => {
    const { heard, io, request, model } = await setup(
      { turns: [{ content: 'after the hang', fault: 'hang', times: 1 }] },
      // Long enough for the second attempt's first byte on a loaded machine, short beside the default.
      { streamIdleTimeoutMs: 1_000 },
    );
    const reply = await callModel(model, request(), io);
    expect(reply.message.content).toBe('after the hang');
    expect(heard.filter((h) => !h.startsWith('text'))).toEqual(['retry 1/4 stream_cut', 'reset retry 2']);
  });

  it('names the server in the error when it cannot be reached', async () => {
    const { io, request, model } = await setup({ turns: [{ content: 'x' }] });
    const url = server!.url;
    await server!.close();
    server = undefined;
    const error = await callModel({ ...model, retry: { maxAttempts: 1 } }, request(), io).catch((e) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect((error as Error).message).toContain(url);
  });

  it.each([true, false])('records how the call went (stream=%s)', async (stream) => {
    const { io, request, model } = await setup(
      { model: 'served-model', turns: [{ content: 'hi', chunkDelayMs: 5 }] },
      { stream },
    );
    const { record } = await callModel(model, request(), io);
    expect(record).toMatchObject({
      wire: 'chat-completions',
      requestHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      attempt: 1,
      durationMs: expect.any(Number),
      responseId: expect.any(String),
      responseModel: 'served-model',
      settings: { model: 'm', tool_choice: 'auto', tools },
    });
    expect(record!.settings).not.toHaveProperty('messages');
    expect(record!.durationMs).toBeGreaterThanOrEqual(0);
    expect(record!.durationMs).toBeLessThan(30_000);
    if (stream) {
      expect(record!.firstChunkMs).toBeGreaterThanOrEqual(0);
      expect(record!.firstChunkMs).toBeLessThanOrEqual(record!.durationMs);
    } else expect(record).not.toHaveProperty('firstChunkMs');
  });

  it('reports each HTTP attempt to telemetry: what was asked, and how it ended', async () => {
    const { io, request, model } = await setup({
      turns: [
        {
          error: { status: 503 },
          times: 1,
          content: 'ok',
          toolCalls: [{ id: 'a', name: 'f', arguments: { x: 1 } }],
          usage: { prompt_tokens: 7, completion_tokens: 3, cached_tokens: 2 },
        },
      ],
    });
    const told: Array<[string, unknown]> = [];
    let handles = 0;
    const telemetry = {
      modelCallStart: (info: unknown) => {
        told.push(['start', info]);
        return ++handles;
      },
      modelCallEnd: (handle: unknown, info: unknown) => told.push([`end ${handle}`, info]),
    };
    const reply = await callModel({ ...model, request: { temperature: 0 } }, request(), { ...io, telemetry });
    expect(reply.record?.attempt).toBe(2);
    expect(told.map(([what]) => what)).toEqual(['start', 'end 1', 'start', 'end 2']);
    expect(told[0]![1]).toMatchObject({
      wire: 'chat-completions',
      model: 'm',
      baseUrl: server!.url,
      attempt: 1,
      stream: true,
      request: { temperature: 0 },
      messages: [{ role: 'user', content: 'go' }],
      tools,
    });
    expect(told[1]![1]).toEqual({ errorType: '503', errorMessage: expect.any(String) });
    expect(told[2]![1]).toMatchObject({ attempt: 2 });
    expect(told[3]![1]).toEqual({
      finishReason: 'tool_calls',
      output: { content: 'ok', toolCalls: [{ id: 'a', name: 'f', arguments: '{"x":1}' }] },
      responseId: expect.any(String),
      responseModel: 'm',
      firstChunkMs: expect.any(Number),
      usage: { inputTokens: 7, outputTokens: 3, cachedInputTokens: 2 },
    });
  });

  it('retries with no retry or reset listener', async () => {
    const { io, request, model } = await setup({
      turns: [{ content: 'fine', fault: 'cut-mid-text', times: 1 }],
    });
    const reply = await callModel(model, request(), { signal: io.signal });
    expect(reply.message.content).toBe('fine');
    expect(reply.record?.attempt).toBe(2);
  });

  it.each([
    ['chat-completions', true, 'signal'],
    ['chat-completions', false, 'signal'],
    ['responses', true, 'signal'],
    ['responses', false, 'signal'],
    ['chat-completions', true, 'stop notice'],
    ['chat-completions', false, 'stop notice'],
    ['responses', true, 'stop notice'],
    ['responses', false, 'stop notice'],
  ] as const)('stops a %s call (stream=%s) the moment the caller aborts its %s', async (api, stream, by) => {
    const { io, request, model } = await setup(
      { turns: [{ content: 'never', fault: 'hang' }] },
      { api, stream },
    );
    const reason = new Error('stop');
    const { caller, stop } = callerStop(by);
    setTimeout(() => stop(reason), 50);
    const started = Date.now();
    await expect(callModel(model, request(), { ...io, signal: undefined, ...caller })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops mid-stream, after text came, when the stop notice stops; a deadline set meanwhile is not what it says', async () => {
    const { io, request, model, heard } = await setup({
      turns: [{ content: 'one two three four five six', chunkDelayMs: 40 }],
    });
    const reason = new Error('interrupted mid-stream');
    const { caller, stop } = callerStop('stop notice');
    const call = callModel(model, request({ deadline: Date.now() + 60_000 }), {
      ...io,
      signal: undefined,
      ...caller,
      onText: (delta) => {
        heard.push(`text ${delta}`);
        stop(reason);
      },
    });
    await expect(call).rejects.toBe(reason);
    expect(heard.filter((h) => h.startsWith('text')).length).toBeGreaterThan(0);
  });

  it('stops during the wait between attempts when the stop notice stops', async () => {
    const { server, io, request, model } = await setup(
      { turns: [{ error: { status: 500 } }] },
      { retry: { baseDelayMs: 60_000, jitter: 'none' } },
    );
    const reason = new Error('stopped while waiting');
    const { caller, stop } = callerStop('stop notice');
    const started = Date.now();
    const call = callModel(model, request(), {
      ...io,
      signal: undefined,
      ...caller,
      onRetry: () => stop(reason),
    });
    await expect(call).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

/** The caller's way to stop a call: an AbortSignal, or a plain stop notice (what an effect passes). */
function callerStop(by: 'signal' | 'stop notice'): {
  caller: { signal?: AbortSignal; stop?: StopNotice };
  stop: (reason: unknown) => void;
} {
  if (by === 'signal') {
    const controller = new AbortController();
    return { caller: { signal: controller.signal }, stop: (reason) => controller.abort(reason) };
  }
  const listeners = new Set<() => void>();
  const notice = {
    aborted: false,
    reason: undefined as unknown,
    onAbort(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    caller: { stop: notice },
    stop: (reason) => {
      notice.aborted = true;
      notice.reason = reason;
      for (const listener of listeners) listener();
    },
  };
}
