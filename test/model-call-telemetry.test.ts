/**
 * `observedAttempt` on its own: what one HTTP attempt tells the telemetry hooks when it starts and
 * ends, from completions with and without each optional field, and from failures of each kind (the
 * callModel test sees the same through the SDK).
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { observedAttempt } from '../src/llm/model-call-telemetry.js';
import type { Completion } from '../src/llm/model-reply.js';
import type { ModelOptions } from '../src/llm/model-request.js';
import { completionOf, modelRequest } from './support/llm-fixtures.js';

const client = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', maxRetries: 0 });
const request = modelRequest();
const completion = (fields: Partial<Completion> = {}) => completionOf({ content: 'hi', ...fields });

/** Runs one observed attempt; the start and end infos the hooks got, and how the attempt settled. */
async function observe(send: () => Promise<Completion>, options: Partial<ModelOptions> = {}) {
  const told: { start?: unknown; end?: Record<string, unknown> } = {};
  const telemetry = {
    modelCallStart: (info: unknown) => {
      told.start = info;
      return 'handle';
    },
    modelCallEnd: (handle: unknown, info: unknown) => {
      expect(handle).toBe('handle');
      told.end = info as Record<string, unknown>;
    },
  };
  const settled = await observedAttempt(telemetry, { client, model: 'm', ...options }, request, 3, send).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return { ...told, settled };
}

describe('observedAttempt', () => {
  it('tells the start: wire, model, server, attempt, streaming, parameters, messages, tools', async () => {
    const { start } = await observe(async () => completion(), { stream: false, api: 'responses' });
    expect(start).toEqual({
      wire: 'responses',
      model: 'm',
      baseUrl: 'http://127.0.0.1:9/v1',
      attempt: 3,
      stream: false,
      request: {},
      messages: request.messages,
      tools: [],
    });
    expect((await observe(async () => completion())).start).toMatchObject({
      wire: 'chat-completions',
      stream: true,
    });
  });

  it('tells only the fields a completion has', async () => {
    const { end, settled } = await observe(async () => completion());
    expect(Object.keys(end!).sort()).toEqual(['finishReason', 'output']);
    expect(settled).toEqual({ value: completion() });
  });

  it('tells identity, first chunk and usage with its cached and reasoning parts when there', async () => {
    const full = completion({
      responseId: 'r1',
      responseModel: 'm-1',
      firstChunkMs: 12,
      calls: [{ id: 'c', name: 'f', argsText: '{}' }],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 4,
        total_tokens: 13,
        cached_tokens: 5,
        reasoning_tokens: 2,
      },
    });
    expect((await observe(async () => full)).end).toEqual({
      finishReason: 'stop',
      output: { content: 'hi', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] },
      responseId: 'r1',
      responseModel: 'm-1',
      firstChunkMs: 12,
      usage: { inputTokens: 9, outputTokens: 4, cachedInputTokens: 5, reasoningTokens: 2 },
    });
    const plain = completion({ usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    expect((await observe(async () => plain)).end!.usage).toStrictEqual({ inputTokens: 1, outputTokens: 1 });
  });

  it('tells a failure by its kind and a message naming the server, and rejects with it', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    const { end, settled } = await observe(() => Promise.reject(refused));
    expect(end).toEqual({ errorType: 'connection', errorMessage: expect.stringContaining('127.0.0.1:9') });
    expect(settled).toEqual({ error: refused });
  });

  it('tells a failure that throws before it returns a promise, and rejects with it', async () => {
    const thrown = new Error('no body');
    const { end, settled } = await observe(() => {
      throw thrown;
    });
    expect(end).toMatchObject({ errorType: 'unknown' });
    expect(settled).toEqual({ error: thrown });
  });
});
