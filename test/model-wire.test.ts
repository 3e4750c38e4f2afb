/**
 * The wire of a model call (src/llm/model-wire.ts) through `callModel` and the real SDK to a raw
 * server: the Responses wire's fallback for models that refuse encrypted reasoning (asked again
 * without it, once per model options, and only for that refusal), and the request hash on both wires.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { callModel } from '../src/llm/model-call.js';
import type { ModelOptions } from '../src/llm/model-request.js';
import { LlmCallError } from '../src/llm/retry-policy.js';
import { modelRequest } from './support/llm-fixtures.js';
import { chunk, completion, type RawReply, startRawModelServer } from './support/raw-model-server.js';

const request = modelRequest();
const io = () => ({ signal: new AbortController().signal });

const answer = (text: string): RawReply => ({
  json: {
    id: 'resp_1',
    status: 'completed',
    output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }],
  },
});
const refusal = (error: Record<string, unknown>, status = 400): RawReply => ({
  status,
  json: { error: { type: 'invalid_request_error', code: null, ...error } },
});

async function responsesModel(replies: RawReply[]) {
  const server = await startRawModelServer(replies);
  const model: ModelOptions = {
    client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
    model: 'm',
    api: 'responses',
    stream: false,
    retry: { maxAttempts: 1 },
  };
  return { server, model };
}

describe('encrypted reasoning on the Responses wire', () => {
  it.each<[string, Record<string, unknown>]>([
    ['names the include parameter', { message: 'Invalid value.', param: 'include' }],
    ['says so in its message', { message: 'Encrypted content is not supported with this model.' }],
  ])(
    'is asked for again without when the refusal %s, and never again on these options',
    async (_n, error) => {
      const { server, model } = await responsesModel([refusal(error), answer('one'), answer('two')]);
      expect((await callModel(model, request, io())).message.content).toBe('one');
      expect((await callModel(model, request, io())).message.content).toBe('two');
      expect(server.requests.map((r) => r.include)).toEqual([
        ['reasoning.encrypted_content'],
        undefined,
        undefined,
      ]);
    },
  );

  it('is not dropped for another 400, nor for the same words under another status', async () => {
    const other = await responsesModel([refusal({ message: 'Unknown model.', param: 'model' }), answer('x')]);
    await expect(callModel(other.model, request, io())).rejects.toBeInstanceOf(LlmCallError);
    expect(other.server.requests).toHaveLength(1);
    const status = await responsesModel([
      refusal({ message: 'Encrypted content is not supported.', param: 'include' }, 422),
      answer('x'),
    ]);
    await expect(callModel(status.model, request, io())).rejects.toBeInstanceOf(LlmCallError);
    expect(status.server.requests).toHaveLength(1);
  });

  it('fails with the refusal when the request asked for no encrypted reasoning already', async () => {
    const { server, model } = await responsesModel([
      refusal({ message: 'Encrypted content is not supported.', param: 'include' }),
      refusal({ message: 'Encrypted content is not supported.', param: 'include' }),
      answer('x'),
    ]);
    await expect(callModel(model, request, io())).rejects.toBeInstanceOf(LlmCallError);
    expect(server.requests.map((r) => r.include)).toEqual([['reasoning.encrypted_content'], undefined]);
  });
});

describe('a refusal that says nothing', () => {
  it('fails with its status when a 400 has no error object', async () => {
    const { server, model } = await responsesModel([{ status: 400, json: { detail: 'bad' } }, answer('x')]);
    const error = await callModel(model, request, io()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ status: 400 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('the request hash', () => {
  it('is of the body each wire sent, and the settings leave the conversation out', async () => {
    const { model } = await responsesModel([answer('a')]);
    const responses = await callModel(model, request, io());
    const chatServer = await startRawModelServer([
      { json: { id: 'c', choices: [{ message: { content: 'a' }, finish_reason: 'stop' }] } },
    ]);
    const chat = await callModel(
      { ...model, api: 'chat-completions', client: new OpenAI({ baseURL: chatServer.url, apiKey: 'k' }) },
      request,
      io(),
    );
    expect(responses.record).toMatchObject({ wire: 'responses', settings: { model: 'm', store: false } });
    expect(chat.record).toMatchObject({ wire: 'chat-completions', settings: { model: 'm' } });
    expect(responses.record!.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(chat.record!.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(responses.record!.requestHash).not.toBe(chat.record!.requestHash);
    expect(chat.record!.settings).not.toHaveProperty('messages');
    expect(responses.record!.settings).not.toHaveProperty('input');
  });

  it('records no response id or model when the server named none', async () => {
    const server = await startRawModelServer([
      { json: { choices: [{ message: { content: 'a' }, finish_reason: 'stop' }] } },
    ]);
    const { record } = await callModel(
      { client: new OpenAI({ baseURL: server.url, apiKey: 'k' }), model: 'm', stream: false },
      request,
      io(),
    );
    expect(record).not.toHaveProperty('responseId');
    expect(record).not.toHaveProperty('responseModel');
    expect(record).not.toHaveProperty('firstChunkMs');
  });
});

describe('what a reply left out', () => {
  const parts = [{ type: 'audio' }, { type: 'text', text: 'kept' }];
  const item = { type: 'web_search_call', id: 'ws' };
  const responsesText = {
    type: 'message',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'kept' }],
  };
  it.each<[string, ModelOptions['api'], boolean, RawReply]>([
    [
      'chat-completions, streamed',
      'chat-completions',
      true,
      { sse: [chunk({ content: parts }), chunk({}, 'stop')] },
    ],
    ['chat-completions', 'chat-completions', false, { json: completion({ content: parts }) }],
    [
      'responses, streamed',
      'responses',
      true,
      {
        sse: [
          { type: 'response.output_item.added', output_index: 0, item },
          { type: 'response.output_text.delta', output_index: 1, delta: 'kept' },
          { type: 'response.completed', response: { status: 'completed', output: [] } },
        ],
        done: false,
      },
    ],
    ['responses', 'responses', false, { json: { status: 'completed', output: [item, responsesText] } }],
  ])('is told to onNotice (%s)', async (_name, api, stream, reply) => {
    const server = await startRawModelServer([reply]);
    const notices: string[] = [];
    const model: ModelOptions = {
      client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
      model: 'm',
      api,
      stream,
      onNotice: (n) => notices.push(n),
    };
    expect((await callModel(model, request, io())).message.content).toBe('kept');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/audio|web_search_call/);
  });
});
