/**
 * The stream assembler on its own, fed `ChatCompletionChunk` objects: when a call is ready (its
 * arguments certainly complete), which id it keeps, and that assembling parses nothing.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CompletionAssembler } from '../src/llm/completion-assembler.js';
import { shapeErrorWhere } from './support/llm-fixtures.js';

type Delta = ChatCompletionChunk.Choice.Delta;
type Finish = ChatCompletionChunk.Choice['finish_reason'];

const chunk = (delta: Delta, finish: Finish = null): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
});
/** The first delta of a call: index, id (left out when `null`), name, no arguments yet. */
const begin = (index: number, id: string | null, name = 'f') =>
  chunk({
    tool_calls: [
      { index, ...(id === null ? {} : { id }), type: 'function', function: { name, arguments: '' } },
    ],
  });
const args = (index: number, text: string) =>
  chunk({ tool_calls: [{ index, function: { arguments: text } }] });
const text = (content: string) => chunk({ content });
const finish = (reason: NonNullable<Finish>) => chunk({}, reason);

/** Pushes the chunks; notes what each one made the assembler tell, by chunk number. */
function assemble(chunks: ChatCompletionChunk[], used: string[] = [], stem = 'call_m1') {
  const told: string[] = [];
  let at = -1;
  const assembler = new CompletionAssembler(
    { usedCallIds: new Set(used), callIdStem: stem },
    {
      onText: (t) => told.push(`${at} text ${t}`),
      onReady: (c) => told.push(`${at} ready ${c.id} ${c.name}(${c.argsText})`),
    },
  );
  for (const c of chunks) {
    at++;
    assembler.push(c);
  }
  return { told, completion: assembler.toCompletion() };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('when a streamed call is ready', () => {
  it('makes a call ready when the next call begins, and the last one at finish_reason tool_calls', () => {
    const { told, completion } = assemble([
      begin(0, 'a'),
      args(0, '{"x":'),
      args(0, '1}'),
      begin(1, 'b', 'g'),
      args(1, '{}'),
      finish('tool_calls'),
    ]);
    expect(told).toEqual(['3 ready a f({"x":1})', '5 ready b g({})']);
    expect(completion.calls).toEqual([
      { id: 'a', name: 'f', argsText: '{"x":1}' },
      { id: 'b', name: 'g', argsText: '{}' },
    ]);
    expect(completion.finishReason).toBe('tool_calls');
  });

  it('does not make a call ready because its arguments parse', () => {
    const { told } = assemble([begin(0, 'a'), args(0, '{"x":1}'), args(0, '  ')]);
    expect(told).toEqual([]);
  });

  it.each(['length', 'content_filter', 'stop'] as const)(
    'makes no open call ready when the message ends with %s',
    (reason) => {
      const { told, completion } = assemble([
        begin(0, 'a'),
        args(0, '{"x":1}'),
        begin(1, 'b'),
        args(1, '{"y":2}'),
        finish(reason),
      ]);
      // The first call's arguments were complete once the second began; the last one's never were.
      expect(told).toEqual(['2 ready a f({"x":1})']);
      expect(completion.calls.map((c) => c.argsText)).toEqual(['{"x":1}', '{"y":2}']);
      expect(completion.finishReason).toBe(reason);
    },
  );

  it("tells a chunk's text before the calls it makes ready, and joins every fragment", () => {
    const { told, completion } = assemble([
      text('Let me '),
      begin(0, 'a'),
      args(0, '{}'),
      chunk({
        content: 'check.',
        tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{' } }],
      }),
      args(1, '}'),
      finish('tool_calls'),
    ]);
    expect(told).toEqual(['0 text Let me ', '3 text check.', '3 ready a f({})', '5 ready b g({})']);
    expect(completion.content).toBe('Let me check.');
  });

  it('keeps reasoning deltas and the usage of a chunk without choices', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const { completion } = assemble([
      chunk({ reasoning_content: 'think ' } as Delta),
      chunk({ reasoning_content: 'more' } as Delta),
      text('hi'),
      finish('stop'),
      { ...chunk({}), choices: [], usage },
    ]);
    expect(completion).toMatchObject({ content: 'hi', reasoning: 'think more', usage, finishReason: 'stop' });
  });

  it('assembles 106 KiB of arguments in fragments ending in "}" without parsing any JSON', () => {
    const big = `{"t":"x}${'xxxxxxx}'.repeat(13_566)}xxxxxx"}`;
    const chunks = [begin(0, 'a')];
    for (let i = 0; i < big.length; i += 8) chunks.push(args(0, big.slice(i, i + 8)));
    chunks.push(begin(1, 'b'), args(1, '{}'), finish('tool_calls'));
    const parse = vi.spyOn(JSON, 'parse');
    const { told, completion } = assemble(chunks);
    expect(parse).not.toHaveBeenCalled();
    const second = chunks.length - 3;
    expect(told).toEqual([`${second} ready a f(${big})`, `${chunks.length - 1} ready b f({})`]);
    expect(completion.calls[0]!.argsText).toHaveLength(108_544);
  });
});

describe('the ids of streamed calls', () => {
  it("keeps the model's ids when they are unique", () => {
    const { completion } = assemble([begin(0, 'a'), begin(1, 'b'), finish('tool_calls')], ['c']);
    expect(completion.calls.map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('replaces a repeated, used, empty or missing id before the call is ready', () => {
    const { told, completion } = assemble(
      [
        begin(0, 'dup'),
        begin(1, 'dup'),
        begin(2, 'old'),
        begin(3, ''),
        begin(4, null),
        begin(5, 'call_m7_4'),
        finish('tool_calls'),
      ],
      ['old', 'call_m7_5'],
      'call_m7',
    );
    const ids = ['dup', 'call_m7_1', 'call_m7_2', 'call_m7_3', 'call_m7_4', 'call_m7_5_2'];
    expect(completion.calls.map((c) => c.id)).toEqual(ids);
    // What was announced carried the same ids.
    expect(told.map((t) => t.split(' ')[2])).toEqual(ids);
  });

  it('takes an id that comes in a later delta of the call', () => {
    const { completion } = assemble([
      begin(0, null),
      chunk({ tool_calls: [{ index: 0, id: 'late', function: { arguments: '{}' } }] }),
      finish('tool_calls'),
    ]);
    expect(completion.calls[0]!.id).toBe('late');
  });

  it('settles the ids of calls never made ready too, in order', () => {
    const { told, completion } = assemble([begin(0, 'x'), begin(1, 'x'), finish('length')], [], 'call_m3');
    expect(told).toEqual(['1 ready x f()']);
    expect(completion.calls.map((c) => c.id)).toEqual(['x', 'call_m3_1']);
  });
});

/** The `where` of the ReplyShapeError pushing `chunks` throws. */
const shapeErrorOf = (chunks: unknown[]) => shapeErrorWhere(() => assemble(chunks as ChatCompletionChunk[]));
const raw = (fields: Record<string, unknown>) => ({ id: 'x', object: 'chat.completion.chunk', ...fields });
const rawChoice = (choice: unknown) => raw({ choices: [choice] });

describe('chunks as servers send them', () => {
  it('reads chunks without choices, keeps the usage of one, and text as typed parts', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const { completion } = assemble([
      raw({ usage }) as never,
      raw({ choices: null }) as never,
      raw({ choices: [] }) as never,
      rawChoice({ delta: null }) as never,
      rawChoice({ delta: { content: null, tool_calls: null } }) as never,
      chunk({
        content: [
          { type: 'text', text: 'parts' },
          { type: 'thinking', thinking: 'hm' },
        ],
      } as never),
      finish('stop'),
    ]);
    expect(completion).toMatchObject({ content: 'parts', reasoning: 'hm', usage, finishReason: 'stop' });
  });

  it('reads a choice without a delta, and a call delta without a function', () => {
    const { completion } = assemble([
      chunk({ tool_calls: [{ index: 0, id: 'a' }] } as never),
      chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }),
      rawChoice({ finish_reason: 'tool_calls' }) as never,
    ]);
    expect(completion).toMatchObject({
      calls: [{ id: 'a', name: 'f', argsText: '{}' }],
      finishReason: 'tool_calls',
    });
  });

  it('stays ended when a chunk after the finish reason has none', () => {
    const assembler = new CompletionAssembler({ usedCallIds: new Set(), callIdStem: 's' });
    assembler.push(text('a'));
    expect(assembler.ended).toBe(false);
    expect(assembler.toCompletion().finishReason).toBe('');
    assembler.push(finish('stop'));
    assembler.push(chunk({}));
    expect(assembler.ended).toBe(true);
    expect(assembler.toCompletion().finishReason).toBe('stop');
  });

  it('joins refusal deltas and tells them as text', () => {
    const { told, completion } = assemble([
      chunk({ refusal: "I can't " }),
      chunk({ refusal: 'help.' }),
      finish('stop'),
    ]);
    expect(completion.refusal).toBe("I can't help.");
    expect(told).toEqual(["0 text I can't ", '1 text help.']);
  });

  it('reads a stream with no listener at all', () => {
    const assembler = new CompletionAssembler({ usedCallIds: new Set(), callIdStem: 's' });
    for (const c of [
      text('a'),
      chunk({ refusal: 'r' }),
      begin(0, 'x'),
      begin(1, 'y'),
      finish('tool_calls'),
    ]) {
      assembler.push(c);
    }
    expect(assembler.toCompletion().calls.map((c) => c.id)).toEqual(['x', 'y']);
  });

  it('keeps a call whose arguments continue after a later call began, whole', () => {
    const { told, completion } = assemble([
      begin(0, 'a'),
      args(0, '{"x":'),
      begin(1, 'b'),
      args(0, '1}'),
      args(1, '{}'),
      finish('tool_calls'),
    ]);
    expect(completion.calls.map((c) => c.argsText)).toEqual(['{"x":1}', '{}']);
    expect(completion.calls).toHaveLength(2);
    expect(told).toEqual(['2 ready a f({"x":)', '5 ready b f({})']);
  });

  it('makes no call ready when a lower index arrives after a higher one', () => {
    const { told, completion } = assemble([begin(1, 'b'), begin(0, 'a'), args(0, '{}'), finish('length')]);
    expect(told).toEqual([]);
    expect(completion.calls.map((c) => c.id)).toEqual(['b', 'a']);
  });

  it('records a call without a name as one that cannot run, with a short preview of its arguments', () => {
    const long = `{"text":"${'x'.repeat(300)}"}`;
    const { completion } = assemble([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { arguments: '{"text":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: long.slice('{"text":'.length) } }] }),
      finish('tool_calls'),
    ]);
    const [call] = completion.calls;
    expect(call).toMatchObject({ id: 'a', name: 'unnamed_call', argsText: '{}' });
    expect(call!.problem).toContain('{\\"text\\":\\"xxx');
    expect(call!.problem!.length).toBeLessThan(250);
  });

  it('makes an id for a call whose id is not a string', () => {
    const { completion } = assemble([
      chunk({ tool_calls: [{ index: 0, id: 5, function: { name: 'f', arguments: '{}' } }] } as never),
      finish('tool_calls'),
    ]);
    expect(completion.calls[0]!.id).toBe('call_m1_0');
  });
});

describe('streamed calls without an index', () => {
  const part = (fields: Record<string, unknown>) => chunk({ tool_calls: [fields] } as never);

  it('begins a new call at an id other than the last one, or a name while the last has one', () => {
    const { told, completion } = assemble([
      part({ id: 'a', function: { name: 'f', arguments: '{"n":' } }),
      part({ id: 'a', function: { arguments: '1}' } }),
      part({ id: 'b', function: { name: 'g', arguments: '{}' } }),
      part({ function: { name: 'h' } }),
      part({ function: { arguments: '{"k":2}' } }),
      finish('tool_calls'),
    ]);
    expect(completion.calls.map((c) => `${c.name}(${c.argsText})`)).toEqual([
      'f({"n":1})',
      'g({})',
      'h({"k":2})',
    ]);
    expect(told).toEqual(['2 ready a f({"n":1})', '3 ready b g({})', '5 ready call_m1_2 h({"k":2})']);
  });

  it('begins a new call at a new id even before its name, and continues a call by deltas without an id', () => {
    const { completion } = assemble([
      part({ id: 'a', function: { name: 'f', arguments: '{"n":' } }),
      part({ function: { arguments: '1}' } }),
      part({ id: 'b' }),
      part({ function: { name: 'g', arguments: '{}' } }),
      finish('tool_calls'),
    ]);
    expect(completion.calls).toEqual([
      { id: 'a', name: 'f', argsText: '{"n":1}' },
      { id: 'b', name: 'g', argsText: '{}' },
    ]);
  });

  it('continues the last call when it had no id or no name yet', () => {
    const { completion } = assemble([
      part({ function: { arguments: '{' } }),
      part({ id: 'late', function: { name: 'f', arguments: '}' } }),
      finish('tool_calls'),
    ]);
    expect(completion.calls).toEqual([{ id: 'late', name: 'f', argsText: '{}' }]);
  });

  it('numbers a new call after the highest index so far, making the calls below it ready', () => {
    const { told, completion } = assemble([
      begin(3, 'a'),
      args(3, '{}'),
      part({ id: 'b', function: { name: 'g', arguments: '{}' } }),
      finish('length'),
    ]);
    expect(told).toEqual(['2 ready a f({})']);
    expect(completion.calls.map((c) => c.id)).toEqual(['a', 'b']);
  });
});

describe('fields of a type a stream cannot use', () => {
  const callWith = (fields: Record<string, unknown>) => rawChoice({ delta: { tool_calls: [fields] } });
  it.each<[string, unknown, string]>([
    ['choices that are not an array', raw({ choices: {} }), 'choices'],
    ['a choice that is not an object', raw({ choices: ['x'] }), 'choices[0]'],
    ['a delta that is not an object', rawChoice({ delta: 'x' }), 'choices[0].delta'],
    [
      'a finish reason that is not text',
      rawChoice({ delta: {}, finish_reason: 5 }),
      'choices[0].finish_reason',
    ],
    ['content that is not text or parts', rawChoice({ delta: { content: 5 } }), 'choices[0].delta.content'],
    ['a refusal that is not text', rawChoice({ delta: { refusal: 5 } }), 'choices[0].delta.refusal'],
    [
      'reasoning that is not text',
      rawChoice({ delta: { reasoning_content: 5 } }),
      'choices[0].delta.reasoning_content',
    ],
    [
      'tool calls that are not an array',
      rawChoice({ delta: { tool_calls: {} } }),
      'choices[0].delta.tool_calls',
    ],
    [
      'a call delta that is not an object',
      rawChoice({ delta: { tool_calls: ['x'] } }),
      'choices[0].delta.tool_calls[]',
    ],
    [
      'a function that is not an object',
      callWith({ index: 0, function: 'f' }),
      'choices[0].delta.tool_calls[].function',
    ],
    [
      'a function name that is not text',
      callWith({ index: 0, function: { name: 5 } }),
      'choices[0].delta.tool_calls[].function.name',
    ],
    [
      'arguments that are a number',
      callWith({ index: 0, function: { name: 'f', arguments: 5 } }),
      'choices[0].delta.tool_calls[].function.arguments',
    ],
    ['usage that is not an object', raw({ usage: 'lots', choices: [] }), 'usage'],
  ])('refuses %s, naming where', (_name, value, where) => {
    expect(shapeErrorOf([value])).toBe(where);
  });

  it('reads a call delta whose function is null as one with no name or arguments yet', () => {
    const { completion } = assemble([
      callWith({ index: 0, id: 'a', function: null }) as never,
      callWith({ index: 0, function: { name: 'f', arguments: '{}' } }) as never,
      finish('tool_calls'),
    ]);
    expect(completion.calls).toEqual([{ id: 'a', name: 'f', argsText: '{}' }]);
  });
});
