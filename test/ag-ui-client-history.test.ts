import { describe, expect, it } from 'vitest';
import type { Message } from '../src/index.js';
import { HistoryConflict, historyDelta } from '../src/server/ag-ui/client-history.js';

const stored: Message[] = [
  { role: 'system', content: 'You help.' },
  { role: 'user', content: 'one' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'r' },
  { role: 'assistant', content: 'done' },
];

describe('historyDelta: the client history against the session', () => {
  it('recognises held messages by server id, call id and user place; returns the one new user message', () => {
    const delta = historyDelta(stored, [
      { id: 'client-u1', role: 'user', content: 'one' },
      {
        id: 'msg-2',
        role: 'assistant',
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { id: 'whatever', role: 'tool', toolCallId: 'c1', content: 'r' },
      { id: 'msg-4', role: 'assistant', content: 'done' },
      { id: 'client-u2', role: 'user', content: 'two' },
    ]);
    expect(delta.user).toEqual({ id: 'client-u2', text: 'two' });
    expect(delta.toolResults.size).toBe(0);
  });

  it('names the first message that contradicts the thread', () => {
    const conflict = () =>
      historyDelta(stored, [
        { id: 'u-a', role: 'user', content: 'one' },
        { id: 'msg-3', role: 'assistant', content: 'not a tool message' },
      ]);
    expect(conflict).toThrow(HistoryConflict);
    expect(conflict).toThrow(/"msg-3".*tool message, not assistant/);
    expect(() => historyDelta(stored, [{ id: 'u-x', role: 'user', content: 'uno' }])).toThrow(
      /"u-x".*text differs/,
    );
    expect(() => historyDelta(stored, [{ id: 'msg-9', role: 'assistant', content: 'x' }])).toThrow(
      /no message at position 9/,
    );
    expect(() => historyDelta(stored, [{ id: 'a-own', role: 'assistant', content: 'x' }])).toThrow(
      /come from the server/,
    );
  });

  it('refuses two new user messages in one run', () => {
    expect(() =>
      historyDelta(stored, [
        { id: 'u1', role: 'user', content: 'one' },
        { id: 'n1', role: 'user', content: 'two' },
        { id: 'n2', role: 'user', content: 'three' },
      ]),
    ).toThrow(/one new user message/);
  });

  it("takes a frontend tool's result, and ignores the tool message a client adds for an interrupt it answers", () => {
    const waiting: Message[] = [
      ...stored.slice(0, 2),
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'fe', type: 'function', function: { name: 'pick', arguments: '{}' } },
          { id: 'ap', type: 'function', function: { name: 'charge', arguments: '{}' } },
        ],
      },
    ];
    const delta = historyDelta(
      waiting,
      [
        { id: 'x1', role: 'tool', toolCallId: 'fe', content: 'red' },
        { id: 'x2', role: 'tool', toolCallId: 'ap', content: '{"approved":true}' },
      ],
      new Set(['ap']),
    );
    expect([...delta.toolResults]).toEqual([['fe', 'red']]);
    expect(() =>
      historyDelta(waiting, [{ id: 'x3', role: 'tool', toolCallId: 'nope', content: 'r' }]),
    ).toThrow(/no call "nope"/);
  });
});
