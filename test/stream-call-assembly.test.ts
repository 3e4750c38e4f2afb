/**
 * The stream assembler on its own, fed `ChatCompletionChunk` objects: when a call is ready (its
 * arguments certainly complete), which id it keeps, and that assembling parses nothing.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CompletionAssembler } from '../src/llm/completion-assembler.js';

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
