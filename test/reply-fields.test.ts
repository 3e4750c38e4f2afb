/**
 * The field readers both wires share (src/llm/reply-fields.ts) and the non-streamed Chat Completions
 * reader built on them (`readCompletion`), fed bodies as servers send them: each field used when it
 * can be, a field that cannot be a `ReplyShapeError` naming where it was and what came, never thrown
 * as a `TypeError` or turned into `[object Object]`.
 */
import { describe, expect, it } from 'vitest';
import { readCompletion } from '../src/llm/completion-call.js';
import {
  argumentsField,
  describeValue,
  finishReasonField,
  isRecord,
  ReplyShapeError,
  readContent,
  reasoningField,
  textField,
  UNNAMED_CALL,
  unusableCall,
  usageField,
} from '../src/llm/reply-fields.js';
import { shapeErrorWhere } from './support/llm-fixtures.js';

describe('describeValue', () => {
  it('names the kind of a value and previews it as JSON, cut at 80 characters', () => {
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue(null)).toBe('null');
    expect(describeValue([1])).toBe('an array ([1])');
    expect(describeValue({ a: 1 })).toBe('an object ({"a":1})');
    expect(describeValue(5)).toBe('a number (5)');
    expect(describeValue('x'.repeat(100))).toBe(`a string ("${'x'.repeat(79)}…)`);
    expect(describeValue('x'.repeat(78))).toBe(`a string ("${'x'.repeat(78)}")`);
  });

  it('previews what JSON cannot hold by its type, and never throws', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeValue(cyclic)).toBe('an object (object)');
    expect(describeValue(10n)).toBe('a bigint (bigint)');
    expect(describeValue(() => 1)).toBe('a function (function)');
  });

  it('is what a ReplyShapeError says the server sent', () => {
    const error = new ReplyShapeError('choices', 7, 'an array');
    expect(error.message).toContain('`choices`');
    expect(error.message).toContain(describeValue(7));
    expect(error.message).toContain('an array');
  });
});

describe('the field readers', () => {
  it('isRecord holds for plain objects only', () => {
    expect([{}, [], null, 'x', 1].map(isRecord)).toEqual([true, false, false, false, false]);
  });

  it('textField reads a string, nothing as empty, and refuses anything else', () => {
    expect(textField('a', 'w')).toBe('a');
    expect(textField(null, 'w')).toBe('');
    expect(textField(undefined, 'w')).toBe('');
    expect(shapeErrorWhere(() => textField(0, 'w'))).toBe('w');
  });

  it('finishReasonField reads a string, null while the stream goes on', () => {
    expect(finishReasonField('stop', 'w')).toBe('stop');
    expect(finishReasonField(null, 'w')).toBeNull();
    expect(finishReasonField(undefined, 'w')).toBeNull();
    expect(shapeErrorWhere(() => finishReasonField(1, 'w'))).toBe('w');
  });

  it('argumentsField reads a string as sent, an object as its JSON, nothing as empty', () => {
    expect(argumentsField('{"a":1}', 'w')).toBe('{"a":1}');
    expect(argumentsField({ a: 1 }, 'w')).toBe('{"a":1}');
    expect(argumentsField(null, 'w')).toBe('');
    expect(argumentsField(undefined, 'w')).toBe('');
    expect(shapeErrorWhere(() => argumentsField([1], 'w'))).toBe('w');
    expect(shapeErrorWhere(() => argumentsField(3, 'w'))).toBe('w');
  });

  it('reasoningField joins reasoning_content and reasoning, once when a server sends both alike', () => {
    expect(reasoningField({ reasoning_content: 'a' }, 'w')).toBe('a');
    expect(reasoningField({ reasoning: 'b' }, 'w')).toBe('b');
    expect(reasoningField({ reasoning_content: 'same', reasoning: 'same' }, 'w')).toBe('same');
    expect(reasoningField({ reasoning_content: 'a', reasoning: 'b' }, 'w')).toBe('ab');
    expect(reasoningField({}, 'w')).toBe('');
    expect(shapeErrorWhere(() => reasoningField({ reasoning: {} }, 'm'))).toBe('m.reasoning');
    expect(shapeErrorWhere(() => reasoningField({ reasoning_content: 1 }, 'm'))).toBe('m.reasoning_content');
  });

  it('unusableCall records a call under its fixed name, with why', () => {
    const call = unusableCall('what was sent');
    expect(call).toMatchObject({ name: UNNAMED_CALL, argsText: '{}' });
    expect(call.problem).toContain('what was sent');
  });
});

describe('readContent', () => {
  it('reads a string, nothing, or typed parts: text parts joined, reasoning parts apart', () => {
    expect(readContent('plain', 'c')).toEqual({ text: 'plain', reasoning: '' });
    expect(readContent(null, 'c')).toEqual({ text: '', reasoning: '' });
    expect(readContent(undefined, 'c')).toEqual({ text: '', reasoning: '' });
    expect(
      readContent(
        [
          'bare ',
          { type: 'text', text: 'a' },
          { type: 'output_text', text: 'b' },
          { type: 'text' },
          { type: 'thinking', thinking: 'T1 ' },
          { type: 'thinking', thinking: [{ type: 'text', text: 'T2 ' }] },
          { type: 'reasoning', text: 'R ' },
          { type: 'reasoning_text', summary: [{ type: 'text', text: 'S ' }] },
          { type: 'reasoning', content: 'C' },
          { type: 'reasoning' },
        ],
        'c',
      ),
    ).toEqual({ text: 'bare ab', reasoning: 'T1 T2 R S C' });
  });

  it('tells each part of an unknown type and leaves it out', () => {
    const notices: string[] = [];
    const read = readContent(
      [
        { type: 'image_url', image_url: {} },
        { type: 'text', text: 'x' },
      ],
      'msg.content',
      (n) => notices.push(n),
    );
    expect(read.text).toBe('x');
    expect(notices).toEqual(['msg.content: a part of type "image_url" was left out of the answer']);
    expect(readContent([{ type: 'audio' }], 'c')).toEqual({ text: '', reasoning: '' });
  });

  it.each<[string, unknown, string]>([
    ['content of another type', 5, 'c'],
    ['an object as content', { text: 'x' }, 'c'],
    ['a part without a type', [{ text: 'x' }], 'c[0]'],
    ['a part that is not an object', [null], 'c[0]'],
    ['a part with a type that is not a string', [{ type: 3 }], 'c[0]'],
    ['text of a text part that is not a string', ['ok', { type: 'text', text: 1 }], 'c[1].text'],
    ['thinking that is not text', [{ type: 'thinking', thinking: 1 }], 'c[0].thinking'],
    [
      'thinking that is not text beside text',
      [{ type: 'thinking', thinking: 1, text: 'x' }],
      'c[0].thinking',
    ],
    [
      'a thinking part list holding a bad part',
      [{ type: 'thinking', thinking: [{ type: 'text', text: 2 }] }],
      'c[0].thinking[0].text',
    ],
    ['a reasoning summary that is not text', [{ type: 'reasoning', summary: 1 }], 'c[0].summary'],
    ['reasoning content that is not text', [{ type: 'reasoning', content: {} }], 'c[0].content'],
    ['reasoning text that is not text', [{ type: 'reasoning', text: true }], 'c[0].text'],
  ])('refuses %s, naming where', (_name, value, where) => {
    expect(shapeErrorWhere(() => readContent(value, 'c'))).toBe(where);
  });
});

describe('usageField', () => {
  it('reads the counts, a missing total as the sum, absent counts as 0', () => {
    expect(usageField({ prompt_tokens: 3, completion_tokens: 2 }, 'usage')).toEqual({
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
    });
    expect(usageField({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 9 }, 'usage')).toMatchObject({
      total_tokens: 9,
    });
    expect(usageField({ completion_tokens: null, total_tokens: null }, 'usage')).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
    });
    expect(usageField(null, 'usage')).toBeNull();
    expect(usageField(undefined, 'usage')).toBeNull();
  });

  it('keeps cached and reasoning tokens when they are whole, positive counts, at most their total', () => {
    const usage = (cached: unknown, reasoning: unknown) =>
      usageField(
        {
          prompt_tokens: 10,
          completion_tokens: 4,
          prompt_tokens_details: { cached_tokens: cached },
          completion_tokens_details: { reasoning_tokens: reasoning },
        },
        'usage',
      );
    expect(usage(6, 3)).toMatchObject({ cached_tokens: 6, reasoning_tokens: 3 });
    expect(usage(60, 30)).toMatchObject({ cached_tokens: 10, reasoning_tokens: 4 });
    expect(usage(10, 4)).toMatchObject({ cached_tokens: 10, reasoning_tokens: 4 });
    for (const odd of [0, -1, 1.5, '6', null]) {
      const read = usage(odd, odd);
      expect(read).not.toHaveProperty('cached_tokens');
      expect(read).not.toHaveProperty('reasoning_tokens');
    }
    expect(
      usageField({ prompt_tokens: 1, prompt_tokens_details: 'x', completion_tokens_details: 5 }, 'u'),
    ).toEqual({
      prompt_tokens: 1,
      completion_tokens: 0,
      total_tokens: 1,
    });
  });

  it.each<[string, unknown, string]>([
    ['usage that is not an object', [1], 'usage'],
    ['a count that is text', { prompt_tokens: '3' }, 'usage.prompt_tokens'],
    [
      'a count that is not finite',
      { completion_tokens: Number.POSITIVE_INFINITY },
      'usage.completion_tokens',
    ],
    ['a total that is not a number', { total_tokens: {} }, 'usage.total_tokens'],
  ])('refuses %s, naming where', (_name, value, where) => {
    expect(shapeErrorWhere(() => usageField(value, 'usage'))).toBe(where);
  });
});

const scope = (used: string[] = []) => ({ usedCallIds: new Set(used), callIdStem: 'call_c1' });
const body = (message: unknown, fields: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  choices: [{ index: 0, message, finish_reason: 'stop' }],
  ...fields,
});

describe('readCompletion', () => {
  it('reads the answer: text, reasoning from both fields and from parts, refusal, usage', () => {
    const completion = readCompletion(
      body(
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'parts. ' },
            { type: 'text', text: 'Hi' },
          ],
          reasoning_content: 'field. ',
          refusal: null,
        },
        { usage: { prompt_tokens: 1, completion_tokens: 1 } },
      ),
      scope(),
    );
    expect(completion).toEqual({
      content: 'Hi',
      reasoning: 'field. parts. ',
      refusal: '',
      calls: [],
      finishReason: 'stop',
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  });

  it('reads a missing finish reason as empty, and a refusal', () => {
    const completion = readCompletion({ choices: [{ message: { content: null, refusal: 'no' } }] }, scope());
    expect(completion).toMatchObject({ content: '', refusal: 'no', finishReason: '', usage: null });
  });

  it('reads every call with a function name, settles ids, and answers a call without one', () => {
    const completion = readCompletion(
      body({
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'echo', arguments: '{}' } },
          { id: 'a', function: { name: 'echo', arguments: { x: 1 } } },
          { id: 7, type: 'function', function: { name: 'echo' } },
          { id: 'used', type: 'function', function: { name: '' } },
          { id: 'b', type: 'custom', custom: { name: 'g' } },
          { id: 'n', type: 'function', function: { name: 5, arguments: '{}' } },
        ],
      }),
      scope(['used']),
    );
    expect(completion.calls.map(({ id, name, argsText }) => [id, name, argsText])).toEqual([
      ['a', 'echo', '{}'],
      ['call_c1_1', 'echo', '{"x":1}'],
      ['call_c1_2', 'echo', ''],
      ['call_c1_3', UNNAMED_CALL, '{}'],
      ['b', UNNAMED_CALL, '{}'],
      ['n', UNNAMED_CALL, '{}'],
    ]);
    expect(completion.calls[3]!.problem).toContain('choices[0].message.tool_calls[3]');
    expect(completion.calls[4]!.problem).toContain('"custom"');
    expect(readCompletion(body({ content: 'x', tool_calls: null }), scope()).calls).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ['a body that is not an object', 'x', 'body'],
    ['choices that are not an array', { choices: {} }, 'choices'],
    ['an empty choices array', { choices: [] }, 'choices[0]'],
    ['a message that is not an object', { choices: [{ message: 'hi' }] }, 'choices[0].message'],
    ['content of another type', body({ content: 1 }), 'choices[0].message.content'],
    ['a refusal that is not text', body({ refusal: 1 }), 'choices[0].message.refusal'],
    [
      'a finish reason that is not text',
      { choices: [{ message: {}, finish_reason: 1 }] },
      'choices[0].finish_reason',
    ],
    ['tool calls that are not an array', body({ tool_calls: {} }), 'choices[0].message.tool_calls'],
    ['a call that is not an object', body({ tool_calls: ['x'] }), 'choices[0].message.tool_calls[0]'],
    [
      'arguments that are a number',
      body({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: 1 } }] }),
      'choices[0].message.tool_calls[0].function.arguments',
    ],
    ['usage that is not an object', body({}, { usage: 'lots' }), 'usage'],
  ])('refuses %s, naming where', (_name, value, where) => {
    expect(shapeErrorWhere(() => readCompletion(value, scope()))).toBe(where);
  });
});
