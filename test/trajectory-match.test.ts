/** `agentloop/evals`: the trajectory of a run and matching it against an expected one. Pure. */
import { describe, expect, it } from 'vitest';
import { type TrajectoryStep, trajectoryMatch, trajectoryOf } from '../src/evals/index.js';
import type { Message, TranscriptEntry } from '../src/index.js';

const step = (name: string, args: unknown): TrajectoryStep => ({ name, args });
const read = step('read', { path: 'a.txt', lines: [1, 2] });
const write = step('write', { path: 'b.txt', text: 'hi', mode: { append: true, sync: false } });
const search = step('search', { q: 'x' });

describe('trajectoryMatch', () => {
  it('strict: same calls in the same order, and names the first differing step', () => {
    expect(trajectoryMatch([read, write], [read, write])).toEqual({ ok: true });
    expect(trajectoryMatch([write, read], [read, write])).toEqual({
      ok: false,
      reason:
        'step 1: expected read({"path":"a.txt","lines":[1,2]}), got write({"path":"b.txt","text":"hi","mode":{"append":true,"sync":false}})',
    });
    expect(trajectoryMatch([read], [read, write])).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^step 2: .* got no call$/),
    });
    expect(trajectoryMatch([read, write], [read])).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^step 2: expected no call/),
    });
    expect(trajectoryMatch([], [])).toEqual({ ok: true });
  });

  it('unordered: the same calls in any order, each expected step used once', () => {
    expect(trajectoryMatch([write, read], [read, write], { mode: 'unordered' })).toEqual({ ok: true });
    expect(trajectoryMatch([read, read], [read, write], { mode: 'unordered' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('write'),
    });
    expect(trajectoryMatch([read, write, search], [read, write], { mode: 'unordered' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('search'),
    });
  });

  it('subset: every call made was expected; superset: every expected call was made', () => {
    expect(trajectoryMatch([read], [read, write], { mode: 'subset' })).toEqual({ ok: true });
    expect(trajectoryMatch([read, search], [read, write], { mode: 'subset' })).toEqual({
      ok: false,
      reason: 'search({"q":"x"}) was not expected (1 unexpected)',
    });
    expect(trajectoryMatch([search, write, read], [read, write], { mode: 'superset' })).toEqual({ ok: true });
    expect(trajectoryMatch([read, search], [read, write], { mode: 'superset' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^expected write\(.*\) was not called \(1 missing\)$/),
    });
  });

  it('finds a full matching where a greedy first choice would miss it', () => {
    // The loose expectation (any read) must not take the one read the exact expectation needs.
    const actual = [step('read', { path: 'a.txt' }), step('read', { path: 'z.txt' })];
    const expected = [{ name: 'read' }, { name: 'read', args: { path: 'a.txt' } }];
    expect(trajectoryMatch(actual, expected, { mode: 'unordered' })).toEqual({ ok: true });
  });

  it('args: exact, subset at every depth, or ignored; an expected step without args takes any', () => {
    const partial = step('write', { path: 'b.txt', mode: { append: true } });
    expect(trajectoryMatch([write], [partial])).toMatchObject({ ok: false });
    expect(trajectoryMatch([write], [partial], { args: 'subset' })).toEqual({ ok: true });
    expect(
      trajectoryMatch([write], [step('write', { mode: { append: false } })], { args: 'subset' }),
    ).toMatchObject({ ok: false });
    expect(trajectoryMatch([read], [step('read', { lines: [1] })], { args: 'subset' })).toMatchObject({
      ok: false,
    });
    expect(trajectoryMatch([write], [step('write', { path: 'other' })], { args: 'ignore' })).toEqual({
      ok: true,
    });
    expect(trajectoryMatch([write], [{ name: 'write' }])).toEqual({ ok: true });
    expect(trajectoryMatch([write], [{ name: 'read' }], { args: 'ignore' })).toMatchObject({ ok: false });
    // Exact is equality of JSON values: key order does not count.
    expect(trajectoryMatch([step('w', { a: 1, b: 2 })], [step('w', { b: 2, a: 1 })])).toEqual({ ok: true });
  });
});

describe('trajectoryOf', () => {
  const messages: Message[] = [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'read', arguments: '{"path":"a.txt","lines":[1,2]}' },
        },
        { id: 'c2', type: 'function', function: { name: 'search', arguments: '{not json' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'text' },
    { role: 'tool', tool_call_id: 'c2', content: 'bad' },
    { role: 'assistant', content: 'done' },
  ];

  it('reads the tool calls of a conversation in order, arguments parsed (raw text when not JSON)', () => {
    expect(trajectoryOf(messages)).toEqual([
      { id: 'c1', name: 'read', args: { path: 'a.txt', lines: [1, 2] } },
      { id: 'c2', name: 'search', args: '{not json' },
    ]);
  });

  it('reads the same from a transcript, passing over other entries and hostile shapes', () => {
    const entries = [
      { seq: 1, at: 't', kind: 'event', event: 'model_call', data: {} },
      ...messages.map((message, i) => ({ seq: i + 2, at: 't', kind: 'message', message })),
      { seq: 9, at: 't', kind: 'tool_call_started', toolCallId: 'c1', name: 'read', args: {} },
      { seq: 10, at: 't', kind: 'message', message: { role: 'assistant', content: '', tool_calls: 'no' } },
      {
        seq: 11,
        at: 't',
        kind: 'message',
        message: { role: 'assistant', content: '', tool_calls: [null, { type: 'function' }] },
      },
    ] as unknown as TranscriptEntry[];
    expect(trajectoryOf(entries)).toEqual(trajectoryOf(messages));
    expect(trajectoryMatch(trajectoryOf(entries), [read, { name: 'search' }])).toEqual({ ok: true });
  });
});
