/**
 * `callModel`, the llm layer's one model call, used on its own (no machine, no tool registry): the
 * real SDK over HTTP against the scripted server.
 */
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../src/llm/chat-request.js';
import { DeadlineExceededError } from '../src/llm/deadline.js';
import { callModel, type ModelOptions } from '../src/llm/model-call.js';
import type { ModelToolCall } from '../src/llm/model-reply.js';
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
    onReset: (info: { attempt: number }) => heard.push(`reset ${info.attempt}`),
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
      turns: [() => ({ content: 'answer', toolCalls: [{ name: 'f', arguments: {} }] })],
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
    expect(heard.filter((h) => !h.startsWith('text'))).toEqual(['retry 1/4 stream_cut', 'reset 2']);
  });

  it('rejects with a DeadlineExceededError when the deadline passes', async () => {
    const { io, request, model } = await setup({ turns: [{ content: 'never', fault: 'hang' }] });
    await expect(callModel(model, request({ deadline: Date.now() + 100 }), io)).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
  });

  it('gives up with an LlmCallError on an error that is not retryable', async () => {
    const { io, request, model } = await setup({ turns: [{ error: { status: 400 } }] });
    await expect(callModel(model, request(), io)).rejects.toBeInstanceOf(LlmCallError);
  });
});
