/**
 * The Responses API request body on its own (`buildResponsesBody`, `toInputItems`): every Chat
 * Completions request field mapped to its Responses equivalent or refused by name, the tools as
 * function tools, and each kind of message as the input items the API takes.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import type { Message } from '../src/llm/message.js';
import type { ChatRequestOptions } from '../src/llm/model-request.js';
import { buildResponsesBody, toInputItems } from '../src/llm/responses-request.js';
import { echoTool, modelRequest } from './support/llm-fixtures.js';

const echo = echoTool;

const body = (extra: ChatRequestOptions['request'], include = true) =>
  buildResponsesBody({ model: 'm', request: extra }, modelRequest(), include);

describe('buildResponsesBody', () => {
  it('is stateless: store false, the encrypted reasoning asked for unless told not to', () => {
    expect(buildResponsesBody({ model: 'm' }, modelRequest())).toEqual({
      model: 'm',
      store: false,
      include: ['reasoning.encrypted_content'],
      input: [{ role: 'user', content: 'hi' }],
    });
    const without = buildResponsesBody({ model: 'm' }, modelRequest(), false);
    expect(without).not.toHaveProperty('include');
  });

  it('maps the token limits: max_completion_tokens wins over max_tokens, in either order', () => {
    expect(body({ max_completion_tokens: 100 })).toMatchObject({ max_output_tokens: 100 });
    expect(body({ max_tokens: 50 })).toMatchObject({ max_output_tokens: 50 });
    expect(body({ max_tokens: 50, max_completion_tokens: 100 }).max_output_tokens).toBe(100);
    expect(body({ max_completion_tokens: 100, max_tokens: 50 }).max_output_tokens).toBe(100);
  });

  it('maps reasoning_effort to reasoning with its summary, and drops it when reasoning is not asked for', () => {
    expect(body({ reasoning_effort: 'high' }).reasoning).toEqual({ effort: 'high', summary: 'auto' });
    expect(body({ reasoning_effort: 'high' }, false)).not.toHaveProperty('reasoning');
  });

  it('maps verbosity and response_format into one `text` field', () => {
    expect(body({ verbosity: 'low', response_format: { type: 'json_object' } }).text).toEqual({
      verbosity: 'low',
      format: { type: 'json_object' },
    });
    expect(body({ response_format: { type: 'text' } })).not.toHaveProperty('text');
    expect(
      body({
        verbosity: 'high',
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'answer',
            schema: { type: 'object' },
            strict: true,
            description: 'the answer',
          },
        },
      }).text,
    ).toEqual({
      verbosity: 'high',
      format: {
        type: 'json_schema',
        name: 'answer',
        schema: { type: 'object' },
        strict: true,
        description: 'the answer',
      },
    });
    // A schema without the optional fields: an empty schema, strict null, no description.
    expect(body({ response_format: { type: 'json_schema', json_schema: { name: 'a' } } }).text).toEqual({
      format: { type: 'json_schema', name: 'a', schema: {}, strict: null },
    });
  });

  it('passes the fields that mean the same, and skips undefined ones', () => {
    const same = {
      temperature: 0.2,
      top_p: 0.9,
      user: 'u',
      metadata: { k: 'v' },
      parallel_tool_calls: false,
      service_tier: 'flex',
      store: true,
      prompt_cache_key: 'p',
      safety_identifier: 's',
      top_logprobs: 2,
    } as const;
    expect(body({ ...same, seed: undefined })).toMatchObject(same);
  });

  it('refuses a field without an equivalent, naming it and the way out', () => {
    expect(() => body({ seed: 1 })).toThrow(/request\.seed .*api: 'chat-completions'/);
    expect(() => body({ n: 2 })).toThrow(/request\.n /);
  });

  it('sends the tools as function tools, `tool_choice` none when tools are disabled', () => {
    const strict: ChatCompletionTool = {
      type: 'function',
      function: { name: 'bare', strict: true },
    };
    const on = buildResponsesBody({ model: 'm' }, modelRequest({ tools: [echo, strict] }));
    expect(on.tools).toEqual([
      {
        type: 'function',
        name: 'echo',
        description: 'echoes',
        parameters: echo.function.parameters,
        strict: false,
      },
      { type: 'function', name: 'bare', parameters: { type: 'object', properties: {} }, strict: true },
    ]);
    expect(on.tool_choice).toBe('auto');
    const off = buildResponsesBody({ model: 'm' }, modelRequest({ tools: [echo], toolsEnabled: false }));
    expect(off.tool_choice).toBe('none');
    expect(buildResponsesBody({ model: 'm' }, modelRequest())).not.toHaveProperty('tools');
  });

  it('refuses a custom tool by its name', () => {
    const custom = { type: 'custom', custom: { name: 'grammar_tool' } } as ChatCompletionTool;
    expect(() => buildResponsesBody({ model: 'm' }, modelRequest({ tools: [custom] }))).toThrow(
      /"grammar_tool"/,
    );
  });

  it('describes the tools in a system message in XML mode, and sends no tools', () => {
    const xml = buildResponsesBody(
      { model: 'm', toolFormat: 'xml' },
      modelRequest({ messages: [{ role: 'system', content: 'be brief' }], tools: [echo] }),
    );
    expect(xml).not.toHaveProperty('tools');
    expect(xml).not.toHaveProperty('tool_choice');
    const input = xml.input as Array<{ role: string; content: string }>;
    expect(input.map((m) => m.role)).toEqual(['system', 'system']);
    expect(input[1]!.content).toContain('- echo: echoes');
    // Without tools, XML mode sends the conversation as it is.
    // A custom tool cannot be described: the function tools are.
    const custom = { type: 'custom', custom: { name: 'grammar_tool' } } as ChatCompletionTool;
    const mixed = buildResponsesBody(
      { model: 'm', toolFormat: 'xml' },
      modelRequest({ tools: [custom, echo] }),
    );
    expect((mixed.input as Array<{ content: string }>)[0]!.content).toContain('- echo: echoes');
    expect((mixed.input as Array<{ content: string }>)[0]!.content).not.toContain('grammar_tool');
    const plain = buildResponsesBody({ model: 'm', toolFormat: 'xml' }, modelRequest());
    expect(plain.input).toEqual([{ role: 'user', content: 'hi' }]);
  });
});

describe('toInputItems', () => {
  it('sends system, developer and user messages as messages, parts joined or mapped', () => {
    const messages: Message[] = [
      {
        role: 'system',
        // A part with neither text nor refusal (a hand-edited transcript) adds nothing.
        content: [{ type: 'text', text: 'a' }, { type: 'image' } as never, { type: 'text', text: 'b' }],
      },
      { role: 'developer', content: 'dev' },
      { role: 'user', content: 'plain' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/i.png' } },
          { type: 'image_url', image_url: { url: 'https://x/j.png', detail: 'low' } },
          { type: 'file', file: { file_id: 'f1' } },
          { type: 'file', file: { file_data: 'ZGF0YQ==', filename: 'a.txt' } },
        ],
      },
    ];
    expect(toInputItems(messages)).toEqual([
      { role: 'system', content: 'ab' },
      { role: 'developer', content: 'dev' },
      { role: 'user', content: 'plain' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://x/i.png', detail: 'auto' },
          { type: 'input_image', image_url: 'https://x/j.png', detail: 'low' },
          { type: 'input_file', file_id: 'f1' },
          { type: 'input_file', file_data: 'ZGF0YQ==', filename: 'a.txt' },
        ],
      },
    ]);
  });

  it('refuses a user part the API cannot take, naming the message', () => {
    const audio: Message = {
      role: 'user',
      content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }],
    };
    expect(() => toInputItems([{ role: 'user', content: 'a' }, audio])).toThrow(
      /messages\[1\]: a "input_audio" part/,
    );
  });

  it('sends an assistant message as its reasoning items, its text, then its calls', () => {
    const reasoning = { type: 'reasoning' as const, id: 'rs_1', summary: [] };
    const messages: Message[] = [
      {
        role: 'assistant',
        content: 'let me look',
        reasoning_items: [reasoning],
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } },
          { id: 'c2', type: 'custom', custom: { name: 'g', input: 'x' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'echo: a' }] },
      { role: 'assistant', content: 'done' },
    ];
    expect(toInputItems(messages)).toEqual([
      reasoning,
      { type: 'message', role: 'assistant', content: 'let me look' },
      { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"text":"a"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'echo: a' },
      { role: 'assistant', content: 'done' },
    ]);
  });

  it('sends a refusal as the assistant text, parts included, and nothing for an empty message', () => {
    expect(
      toInputItems([
        { role: 'assistant', content: null, refusal: 'no' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'never' }] },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: null, tool_calls: [] },
      ]),
    ).toEqual([
      { role: 'assistant', content: 'no' },
      { role: 'assistant', content: 'never' },
    ]);
  });

  it('refuses a message role the wire has no item for', () => {
    const legacy = { role: 'function', name: 'f', content: 'x' } as Message;
    expect(() => toInputItems([legacy])).toThrow(/messages\[0\]: a "function" message/);
  });
});
