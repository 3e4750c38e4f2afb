/**
 * Reading the Responses API on its own: a `response` object (`readResponse`, the non-streamed body and
 * a stream's last event) and a stream's events (`ResponseAssembler`), fed objects as servers send them.
 * Each field is used when it can be; a field that cannot be is a `ReplyShapeError` naming where it
 * was; an item or part left out is told to the notice.
 */
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { classifyLlmError } from '../src/llm/error-classification.js';
import { responseIdentityOf } from '../src/llm/response-identity.js';
import {
  finishReasonOf,
  readResponse,
  reasoningItemOf,
  reasoningTextOf,
  responseError,
} from '../src/llm/responses-reply.js';
import { ResponseAssembler } from '../src/llm/responses-stream.js';
import { shapeErrorWhere } from './support/llm-fixtures.js';

const scope = (used: string[] = []) => ({ usedCallIds: new Set(used), callIdStem: 'call_r1' });

const text = (t: string) => ({ type: 'output_text', text: t });
const message = (...content: unknown[]) => ({ type: 'message', role: 'assistant', content });
const call = (fields: Record<string, unknown>) => ({ type: 'function_call', name: 'echo', ...fields });
const response = (output: unknown[], fields: Record<string, unknown> = {}) => ({
  id: 'resp_1',
  status: 'completed',
  output,
  ...fields,
});

describe('readResponse', () => {
  it('joins the text parts, the refusal parts, and tells the other parts', () => {
    const notices: string[] = [];
    const completion = readResponse(
      response([
        message(text('Hello, '), { type: 'refusal', refusal: 'not ' }, text('world'), { type: 'audio' }),
        message({ type: 'refusal', refusal: 'that' }),
      ]),
      scope(),
      (n) => notices.push(n),
    );
    expect(completion).toEqual({
      content: 'Hello, world',
      reasoning: '',
      refusal: 'not that',
      calls: [],
      finishReason: 'stop',
      usage: null,
    });
    expect(notices).toEqual([
      'response.output[0].content[3]: a part of type "audio" was left out of the answer',
    ]);
  });

  it('tells an item of an unknown type, and reads the rest', () => {
    const notices: string[] = [];
    const completion = readResponse(
      response([{ type: 'web_search_call', id: 'ws' }, message(text('ok'))]),
      scope(),
      (n) => notices.push(n),
    );
    expect(completion.content).toBe('ok');
    expect(notices).toEqual([
      'response.output[0]: an item of type "web_search_call" was left out of the answer',
    ]);
    // Without a notice, the item is still left out quietly.
    expect(readResponse(response([{ type: 'x' }, message({ type: 'y' })]), scope()).content).toBe('');
  });

  it('reads function calls: their ids settled, arguments as text, a nameless call answered', () => {
    const completion = readResponse(
      response([
        call({ call_id: 'c1', arguments: '{"text":"a"}' }),
        call({ call_id: 'c1', arguments: { text: 'b' } }),
        call({ call_id: 'old', arguments: undefined }),
        call({ name: '', call_id: 42 }),
      ]),
      scope(['old']),
    );
    expect(completion.finishReason).toBe('tool_calls');
    expect(completion.calls.map(({ id, name, argsText }) => [id, name, argsText])).toEqual([
      ['c1', 'echo', '{"text":"a"}'],
      ['call_r1_1', 'echo', '{"text":"b"}'],
      ['call_r1_2', 'echo', ''],
      ['call_r1_3', 'unnamed_call', '{}'],
    ]);
    expect(completion.calls[3]!.problem).toContain('response.output[3]');
    expect(completion.calls.slice(0, 3).every((c) => c.problem === undefined)).toBe(true);
  });

  it('keeps reasoning items whole, their summaries (else their text) as the reasoning', () => {
    const withSummary = {
      type: 'reasoning',
      id: 'rs_1',
      summary: [
        { type: 'summary_text', text: 'first' },
        { type: 'summary_text', text: 'second' },
      ],
      encrypted_content: 'enc',
    };
    const withText = {
      type: 'reasoning',
      id: 'rs_2',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'raw' }],
    };
    const completion = readResponse(
      response([
        withSummary,
        withText,
        { type: 'reasoning', id: 'rs_3', summary: [], encrypted_content: null },
        message(text('answer')),
      ]),
      scope(),
    );
    expect(completion.reasoning).toBe('first\n\nsecond\n\nraw');
    // Kept as sent, what is empty left out.
    expect(completion.reasoningItems).toEqual([
      withSummary,
      withText,
      { type: 'reasoning', id: 'rs_3', summary: [] },
    ]);
    expect(readResponse(response([message(text('x'))]), scope())).not.toHaveProperty('reasoningItems');
  });

  it('reads usage in Chat Completions terms, cached and reasoning tokens included', () => {
    const completion = readResponse(
      response([], {
        usage: {
          input_tokens: 100,
          output_tokens: 40,
          total_tokens: 140,
          input_tokens_details: { cached_tokens: 60 },
          output_tokens_details: { reasoning_tokens: 30 },
        },
      }),
      scope(),
    );
    expect(completion.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      cached_tokens: 60,
      reasoning_tokens: 30,
    });
  });

  it('throws a failed response as an APIError the retry policy classifies by its code', () => {
    const failed = () =>
      readResponse(
        response([], { status: 'failed', error: { code: 'server_error', message: 'overloaded' } }),
        scope(),
      );
    expect(failed).toThrow(APIError);
    let error: unknown;
    try {
      failed();
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'server_error', status: undefined });
    expect((error as Error).message).toContain('overloaded');
    expect(classifyLlmError(error).retryable).toBe(true);
    // A failed response that gives no error, and an `error` under another status, are failures too.
    expect(() => readResponse(response([], { status: 'failed' }), scope())).toThrow(/without saying why/);
    expect(() => readResponse(response([], { error: { code: 'invalid_prompt' } }), scope())).toThrow(
      APIError,
    );
  });

  it.each<[string, unknown, string]>([
    ['a body that is not an object', 'oops', 'response'],
    ['output that is not an array', { status: 'completed', output: {} }, 'response.output'],
    ['an item without a string type', response([{ type: 1 }]), 'response.output[0]'],
    ['an item that is not an object', response([null]), 'response.output[0]'],
    [
      'message content that is not an array',
      response([{ type: 'message', content: 'x' }]),
      'response.output[0].content',
    ],
    ['a part that is not an object', response([message('x')]), 'response.output[0].content[0]'],
    [
      'text that is not a string',
      response([message({ type: 'output_text', text: 5 })]),
      'response.output[0].content[0].text',
    ],
    [
      'a refusal that is not a string',
      response([message({ type: 'refusal', refusal: {} })]),
      'response.output[0].content[0].refusal',
    ],
    ['a call name that is not a string', response([call({ name: 3 })]), 'response.output[0].name'],
    ['call arguments that are a number', response([call({ arguments: 7 })]), 'response.output[0].arguments'],
    [
      'a reasoning item without an id',
      response([{ type: 'reasoning', summary: [] }]),
      'response.output[0].id',
    ],
    ['usage that is not an object', response([], { usage: 'many' }), 'response.usage'],
  ])('refuses %s, naming where', (_name, body, where) => {
    expect(shapeErrorWhere(() => readResponse(body, scope()))).toBe(where);
  });
});

describe('reasoningItemOf', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a summary that is not an array', { id: 'r', summary: 'x' }, 'it.summary'],
    ['a summary part that is not an object', { id: 'r', summary: ['x'] }, 'it.summary[0]'],
    ['summary text that is not a string', { id: 'r', summary: [{ text: 1 }] }, 'it.summary[0].text'],
    ['encrypted content that is not a string', { id: 'r', encrypted_content: 5 }, 'it.encrypted_content'],
    ['content parts that are not objects', { id: 'r', content: [1] }, 'it.content[0]'],
  ])('refuses %s', (_name, item, where) => {
    expect(shapeErrorWhere(() => reasoningItemOf(item, 'it'))).toBe(where);
  });

  it('keeps no content for an empty list, and a missing or null summary as none', () => {
    expect(reasoningItemOf({ id: 'r', summary: null }, 'it').summary).toEqual([]);
    expect(reasoningItemOf({ id: 'r', content: [], encrypted_content: '' }, 'it')).toEqual({
      type: 'reasoning',
      id: 'r',
      summary: [],
    });
  });

  it('reads the summary before the text, joined as paragraphs', () => {
    const both = reasoningItemOf(
      { id: 'r', summary: [{ text: 's' }], content: [{ text: 'c1' }, { text: 'c2' }] },
      'it',
    );
    expect(reasoningTextOf(both)).toBe('s');
    expect(reasoningTextOf({ ...both, summary: [] })).toBe('c1\n\nc2');
    expect(reasoningTextOf({ type: 'reasoning', id: 'r', summary: [] })).toBe('');
  });
});

describe('finishReasonOf and responseError', () => {
  it('says length or content_filter for an incomplete response, whatever else it holds', () => {
    const incomplete = (details: unknown) => ({ status: 'incomplete', incomplete_details: details });
    expect(finishReasonOf(incomplete({ reason: 'max_output_tokens' }), true)).toBe('length');
    expect(finishReasonOf(incomplete({ reason: 'content_filter' }), true)).toBe('content_filter');
    expect(finishReasonOf(incomplete(null), false)).toBe('length');
    expect(finishReasonOf({ status: 'completed' }, true)).toBe('tool_calls');
    expect(finishReasonOf({}, false)).toBe('stop');
  });

  it('makes an error without a status from whatever the server said, or did not', () => {
    const silent = responseError('garbage');
    expect(silent).toBeInstanceOf(APIError);
    expect(silent).toMatchObject({ status: undefined, code: null });
    expect(silent.message).toMatch(/without saying why/);
    const odd = responseError({ message: 42, code: 7 });
    expect(odd).toMatchObject({ code: null });
    expect(odd.message).toMatch(/without saying why/);
    const limited = responseError({ message: 'slow down', code: 'rate_limit_exceeded' });
    expect(limited).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_exceeded' });
    expect(classifyLlmError(limited).kind).toBe('rate_limit');
  });
});

/** Pushes the events; what the assembler told, and its completion. */
function assemble(events: unknown[], used: string[] = []) {
  const told: string[] = [];
  const assembler = new ResponseAssembler(scope(used), {
    onText: (t) => told.push(`text ${t}`),
    onReady: (c) => told.push(`ready ${c.id} ${c.name}(${c.argsText})`),
    notice: (n) => told.push(`notice ${n}`),
  });
  for (const event of events) assembler.push(event);
  return { told, assembler, completion: () => assembler.toCompletion() };
}

const ev = (type: string, fields: Record<string, unknown> = {}) => ({ type, ...fields });
const added = (index: number | undefined, item: Record<string, unknown>) =>
  ev('response.output_item.added', { ...(index === undefined ? {} : { output_index: index }), item });
const completed = (fields: Record<string, unknown> = {}) =>
  ev('response.completed', { response: { status: 'completed', output: [], ...fields } });

describe('ResponseAssembler', () => {
  it('streams text and refusal deltas, tells them, and ends with the stop reason and usage', () => {
    const { told, assembler, completion } = assemble([
      ev('response.output_text.delta', { delta: 'Hel' }),
      ev('response.output_text.delta', { delta: '' }),
      ev('response.output_text.delta', { delta: 'lo' }),
      ev('response.refusal.delta', { delta: 'no' }),
    ]);
    expect(assembler.ended).toBe(false);
    assembler.push(completed({ usage: { input_tokens: 3, output_tokens: 2 } }));
    expect(assembler.ended).toBe(true);
    expect(told).toEqual(['text Hel', 'text lo', 'text no']);
    expect(completion()).toEqual({
      content: 'Hello',
      reasoning: '',
      refusal: 'no',
      calls: [],
      finishReason: 'stop',
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it('joins reasoning deltas, each summary part after the first as a new paragraph, and keeps the items', () => {
    const item = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'a' }] };
    const { completion } = assemble([
      ev('response.reasoning_summary_part.added'),
      ev('response.reasoning_summary_text.delta', { delta: 'a' }),
      ev('response.reasoning_summary_part.added'),
      ev('response.reasoning_summary_text.delta', { delta: 'b' }),
      ev('response.reasoning_text.delta', { delta: 'c' }),
      ev('response.output_item.done', { item }),
      completed(),
    ]);
    expect(completion().reasoning).toBe('a\n\nbc');
    expect(completion().reasoningItems).toEqual([item]);
  });

  it('assembles calls by output index, ready when their arguments are done, in order', () => {
    const { told, completion } = assemble([
      added(1, { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '' }),
      added(3, { type: 'function_call', call_id: 'c1', name: 'echo' }),
      ev('response.function_call_arguments.delta', { output_index: 3, delta: '{"b":' }),
      ev('response.function_call_arguments.delta', { output_index: 1, delta: '{"a":1}' }),
      ev('response.function_call_arguments.delta', { output_index: 3, delta: '2}' }),
      ev('response.function_call_arguments.done', { output_index: 3, arguments: '{"b":2}' }),
      // Done again for a settled call: nothing changes, nothing is told twice.
      ev('response.function_call_arguments.done', { output_index: 1, arguments: '{"changed":1}' }),
      completed(),
    ]);
    expect(told).toEqual(['ready c1 echo({"a":1})', 'ready call_r1_1 echo({"b":2})']);
    expect(completion().calls.map((c) => c.argsText)).toEqual(['{"a":1}', '{"b":2}']);
    expect(completion().finishReason).toBe('tool_calls');
  });

  it('makes a call ready at its item done, with the arguments the item carries', () => {
    const { told } = assemble([
      added(0, { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"x"' }),
      ev('response.output_item.done', {
        output_index: 0,
        item: { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"x":1}' },
      }),
      added(1, { type: 'function_call', call_id: 'c2', name: 'echo', arguments: '{"y"' }),
      ev('response.function_call_arguments.delta', { output_index: 1, delta: ':2}' }),
      ev('response.output_item.done', { output_index: 1, item: { type: 'function_call' } }),
    ]);
    expect(told).toEqual(['ready c1 echo({"x":1})', 'ready c2 echo({"y":2})']);
  });

  it('takes the last call for an event without an output index, and tells an event for no call', () => {
    const { told, completion } = assemble([
      ev('response.function_call_arguments.delta', { delta: 'lost' }),
      added(undefined, { type: 'function_call', name: 'echo', call_id: 7 }),
      added(undefined, { type: 'function_call', name: 'echo' }),
      added(undefined, { type: 'function_call', name: 'echo' }),
      // Without an index: the last call. With one: the call added at that position.
      ev('response.function_call_arguments.delta', { delta: '{}' }),
      ev('response.function_call_arguments.delta', { output_index: 1, delta: '[]' }),
      ev('response.function_call_arguments.done', { output_index: 9, arguments: '{}' }),
      ev('response.output_item.done', { output_index: 9, item: { type: 'function_call', arguments: '{}' } }),
      completed(),
    ]);
    expect(told).toEqual([
      'notice response.function_call_arguments.delta for an output item that was never added',
      'notice response.function_call_arguments.done for an output item that was never added',
      'notice response.output_item.done for an output item that was never added',
    ]);
    // A call id that is not a string is not kept.
    expect(completion().calls.map((c) => [c.id, c.argsText])).toEqual([
      ['call_r1_0', ''],
      ['call_r1_1', '[]'],
      ['call_r1_2', '{}'],
    ]);
  });

  it('tells an output item other than a message, reasoning or call', () => {
    const { told } = assemble([
      added(0, { type: 'message' }),
      added(1, { type: 'reasoning' }),
      added(2, { type: 'file_search_call' }),
      ev('response.output_item.done', { item: { type: 'message' } }),
      ev('response.some_future_event'),
    ]);
    expect(told).toEqual(['notice an output item of type "file_search_call" was left out of the answer']);
  });

  it('reads the final response whole when the stream told nothing else', () => {
    const output = [message(text('only at the end'))];
    const { completion } = assemble([completed({ output, usage: { input_tokens: 1, output_tokens: 1 } })]);
    expect(completion()).toMatchObject({ content: 'only at the end', finishReason: 'stop' });
    expect(completion().usage).toMatchObject({ total_tokens: 2 });
    // Once anything was streamed, the streamed parts are the answer.
    const streamed = assemble([
      ev('response.output_text.delta', { delta: 'streamed' }),
      completed({ output }),
    ]);
    expect(streamed.completion().content).toBe('streamed');
    for (const first of [
      ev('response.refusal.delta', { delta: 'r' }),
      added(0, { type: 'function_call', name: 'echo' }),
      ev('response.output_item.done', { item: { type: 'reasoning', id: 'rs', summary: [] } }),
    ]) {
      expect(assemble([first, completed({ output })]).completion().content).toBe('');
    }
  });

  it('ends an incomplete response with its reason', () => {
    const { completion } = assemble([
      ev('response.output_text.delta', { delta: 'cut' }),
      ev('response.incomplete', {
        response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
      }),
    ]);
    expect(completion().finishReason).toBe('length');
  });

  it('throws the failure of a failed response or an error event, classified by its code', () => {
    const failure = (event: unknown) => {
      try {
        assemble([event]);
      } catch (error) {
        return error as APIError;
      }
      throw new Error('no error thrown');
    };
    const failed = failure(
      ev('response.failed', { response: { error: { code: 'server_error', message: 'boom' } } }),
    );
    expect(failed).toMatchObject({ code: 'server_error' });
    expect(failure(ev('response.failed', { response: 'x' })).message).toMatch(/without saying why/);
    expect(failure(ev('error', { code: 'rate_limit_exceeded', message: 'slow' }))).toMatchObject({
      code: 'rate_limit_exceeded',
    });
  });

  it.each<[string, unknown, string]>([
    ['an event that is not an object', 'x', 'a stream event'],
    ['an event without a string type', { type: 1 }, 'a stream event'],
    [
      'a text delta that is not a string',
      ev('response.output_text.delta', { delta: 1 }),
      'response.output_text.delta.delta',
    ],
    [
      'a refusal delta that is not a string',
      ev('response.refusal.delta', { delta: [] }),
      'response.refusal.delta.delta',
    ],
    [
      'a reasoning delta that is not a string',
      ev('response.reasoning_text.delta', { delta: {} }),
      'response.reasoning_text.delta.delta',
    ],
    [
      'an added item that is not an object',
      ev('response.output_item.added', { item: 'x' }),
      'response.output_item.added.item',
    ],
    [
      'a done item that is not an object',
      ev('response.output_item.done', {}),
      'response.output_item.done.item',
    ],
    [
      'a call name that is not a string',
      added(0, { type: 'function_call', name: 1 }),
      'response.output_item.added.item.name',
    ],
    [
      'call arguments that are not a string',
      added(0, { type: 'function_call', name: 'e', arguments: {} }),
      'response.output_item.added.item.arguments',
    ],
    [
      'an end without a response',
      ev('response.completed', { response: null }),
      'response.completed.response',
    ],
  ])('refuses %s, naming where', (_name, event, where) => {
    expect(shapeErrorWhere(() => assemble([event]))).toBe(where);
  });

  it('makes only the calls up to the one whose arguments are done ready', () => {
    const { told } = assemble([
      added(0, { type: 'function_call', call_id: 'a', name: 'echo', arguments: '{}' }),
      added(1, { type: 'function_call', call_id: 'b', name: 'echo', arguments: '{' }),
      ev('response.function_call_arguments.done', { output_index: 0, arguments: '{}' }),
    ]);
    expect(told).toEqual(['ready a echo({})']);
  });

  it('reads a stream with no listener at all', () => {
    const assembler = new ResponseAssembler(scope());
    for (const event of [
      added(0, { type: 'file_search_call' }),
      ev('response.function_call_arguments.delta', { delta: 'x' }),
      ev('response.output_text.delta', { delta: 'hi' }),
      added(1, { type: 'function_call', name: 'echo', arguments: '{}' }),
      ev('response.function_call_arguments.done', { output_index: 1, arguments: '{}' }),
      completed(),
    ]) {
      assembler.push(event);
    }
    expect(assembler.toCompletion()).toMatchObject({ content: 'hi', calls: [{ name: 'echo' }] });
  });

  it('gives the completion so far without a stop reason before the stream ended', () => {
    const { completion } = assemble([ev('response.output_text.delta', { delta: 'so far' })]);
    expect(completion()).toMatchObject({ content: 'so far', finishReason: '', usage: null });
  });

  it('names the done reasoning item that cannot be kept', () => {
    expect(
      shapeErrorWhere(() =>
        assemble([ev('response.output_item.done', { item: { type: 'reasoning', summary: [] } })]),
      ),
    ).toBe('response.output_item.done.item.id');
  });

  it('refuses argument deltas and done arguments that are not strings', () => {
    const open = added(0, { type: 'function_call', name: 'echo' });
    expect(
      shapeErrorWhere(() =>
        assemble([open, ev('response.function_call_arguments.delta', { output_index: 0, delta: 1 })]),
      ),
    ).toBe('response.function_call_arguments.delta.delta');
    expect(
      shapeErrorWhere(() =>
        assemble([open, ev('response.function_call_arguments.done', { output_index: 0, arguments: 1 })]),
      ),
    ).toBe('response.function_call_arguments.done.arguments');
  });
});

describe('responseIdentityOf', () => {
  it('reads the id and model at the top of a body or chunk, or under `response` in a stream event', () => {
    expect(responseIdentityOf({ id: 'chatcmpl-1', model: 'm' })).toEqual({
      responseId: 'chatcmpl-1',
      responseModel: 'm',
    });
    expect(
      responseIdentityOf({ type: 'response.created', response: { id: 'resp_1', model: 'gpt' } }),
    ).toEqual({
      responseId: 'resp_1',
      responseModel: 'gpt',
    });
  });

  it('leaves out what is not a string, and reads nothing from what is not an object', () => {
    expect(responseIdentityOf({ id: 5, model: null })).toStrictEqual({});
    for (const value of [null, undefined, 'resp', 7]) expect(responseIdentityOf(value)).toStrictEqual({});
  });
});
