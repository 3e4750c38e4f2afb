import { describe, expect, it } from 'vitest';
import type { Message } from '../src/llm/message.js';
import { initialContext } from '../src/machines/agent-context.js';
import { agentContextSchema, conversationProblem } from '../src/machines/agent-context-schema.js';

// The tool-call rules the Chat Completions API enforces, as a restore checks a saved conversation:
// every tool message answers an open call of the assistant message before it, and every call is
// answered before the next other message (a batch in flight may stay open at the end).

const asks = (...ids: string[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 't', arguments: '{}' } })),
});
const answers = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: 'ok' });
const user = (content: string): Message => ({ role: 'user', content });

describe('conversationProblem', () => {
  it('accepts a conversation whose calls are all answered, in any order', () => {
    const messages = [
      user('go'),
      asks('a', 'b'),
      answers('b'),
      answers('a'),
      { role: 'assistant', content: 'done' },
    ];
    expect(conversationProblem(messages as Message[])).toBeUndefined();
    expect(conversationProblem([])).toBeUndefined();
    expect(conversationProblem([user('a'), user('b'), { role: 'assistant', content: 'x' }])).toBeUndefined();
  });

  it('finds a tool message that answers no open call: the first, a second answer, one after a user message', () => {
    expect(conversationProblem([user('go'), answers('a')])).toMatchObject({ index: 1 });
    expect(conversationProblem([asks('a'), answers('a'), answers('a')])).toMatchObject({ index: 2 });
    expect(conversationProblem([asks('a'), answers('a'), user('more'), answers('a')])).toMatchObject({
      index: 3,
    });
    expect(conversationProblem([asks('a'), answers('x')])?.message).toContain('"x"');
  });

  it('finds calls left unanswered before the next message, naming them and the message that made them', () => {
    const problem = conversationProblem([user('go'), asks('a', 'b'), answers('a'), user('next')]);
    expect(problem?.index).toBe(3);
    expect(problem?.message).toContain('"b"');
    expect(problem?.message).not.toContain('"a"');
    expect(problem?.message).toContain('1');
    // Before another assistant message too.
    expect(conversationProblem([asks('a'), asks('b'), answers('b')])).toMatchObject({ index: 1 });
  });

  it('an assistant message without calls, or with an empty list, opens nothing', () => {
    const empty = { role: 'assistant', content: 'x', tool_calls: [] } as Message;
    expect(conversationProblem([empty, user('next')])).toBeUndefined();
    expect(conversationProblem([empty, answers('a')])).toMatchObject({ index: 1 });
  });

  it('finds calls left open at the end, unless the end may be open (a batch in flight)', () => {
    const messages = [user('go'), asks('a', 'b'), answers('b')];
    const problem = conversationProblem(messages);
    expect(problem?.index).toBe(3);
    expect(problem?.message).toContain('"a"');
    expect(problem?.message).not.toContain('"b"');
    expect(conversationProblem(messages, { openEnd: true })).toBeUndefined();
    expect(conversationProblem([asks('a'), answers('a')])).toBeUndefined();
  });
});

describe('agentContextSchema', () => {
  const context = (messages: Message[]) => ({ ...initialContext({ sessionId: 's' }), messages });

  it('accepts a saved context whose last assistant message waits for its calls (WaitingApproval)', () => {
    expect(agentContextSchema.safeParse(context([user('go'), asks('a', 'b'), answers('a')])).success).toBe(
      true,
    );
  });

  it('refuses a conversation the API would refuse, at the message where it shows', () => {
    const result = agentContextSchema.safeParse(context([user('go'), asks('a'), user('again')]));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['messages', 2]);
    expect(result.error?.issues[0]?.message).toContain('"a"');
  });
});
