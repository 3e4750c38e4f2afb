/**
 * `toModelReply`: how one completion becomes the assistant message the conversation keeps (content
 * null only beside calls, a refusal shown as the answer, reasoning items kept), the calls (none when
 * tools were disabled), usage in the agent's terms and the reasoning (`reasoningOf`).
 */
import { describe, expect, it } from 'vitest';
import { toModelReply } from '../src/llm/model-reply.js';
import { reasoningOf } from '../src/llm/reasoning.js';
import { completionOf } from './support/llm-fixtures.js';

const completion = completionOf;
const call = { id: 'c1', name: 'echo', argsText: '{"text":"a"}' };

describe('toModelReply', () => {
  it('keeps a plain answer as the message content, with no other field', () => {
    const reply = toModelReply(completion({ content: 'Hi' }), true);
    expect(reply).toEqual({
      message: { role: 'assistant', content: 'Hi' },
      calls: [],
      finishReason: 'stop',
      usage: null,
    });
  });

  it('sends an empty answer as empty text, and content null only beside calls', () => {
    expect(toModelReply(completion(), true).message).toEqual({ role: 'assistant', content: '' });
    const withCalls = toModelReply(completion({ calls: [call], finishReason: 'tool_calls' }), true);
    expect(withCalls.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } }],
    });
    expect(withCalls.calls).toEqual([call]);
    expect(withCalls.finishReason).toBe('tool_calls');
  });

  it('drops the calls of a reply when tools were disabled', () => {
    const reply = toModelReply(completion({ content: 'x', calls: [call] }), false);
    expect(reply.calls).toEqual([]);
    expect(reply.message).not.toHaveProperty('tool_calls');
    expect(toModelReply(completion({ calls: [call] }), false).message.content).toBe('');
  });

  it('shows a refusal as the answer when there is no other, and keeps it as `refusal`', () => {
    expect(toModelReply(completion({ refusal: 'No.' }), true).message).toEqual({
      role: 'assistant',
      content: 'No.',
      refusal: 'No.',
    });
    expect(toModelReply(completion({ content: 'Partly', refusal: 'No.' }), true).message).toEqual({
      role: 'assistant',
      content: 'Partly',
      refusal: 'No.',
    });
  });

  it('keeps reasoning items on the message, and none when the list is empty', () => {
    const item = { type: 'reasoning' as const, id: 'rs', summary: [] };
    expect(toModelReply(completion({ reasoningItems: [item] }), true).message.reasoning_items).toEqual([
      item,
    ]);
    expect(toModelReply(completion({ reasoningItems: [] }), true).message).not.toHaveProperty(
      'reasoning_items',
    );
  });

  it('gives usage in the agent terms, the cached part only when there is one', () => {
    const usage = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };
    expect(toModelReply(completion({ usage }), true).usage).toEqual({
      promptTokens: 10,
      completionTokens: 3,
      totalTokens: 13,
    });
    expect(toModelReply(completion({ usage: { ...usage, cached_tokens: 4 } }), true).usage).toEqual({
      promptTokens: 10,
      completionTokens: 3,
      totalTokens: 13,
      cachedPromptTokens: 4,
    });
    expect(toModelReply(completion({ usage: undefined }), true).usage).toBeNull();
  });

  it('gives the reasoning the server sent, else the thinking blocks of the text', () => {
    expect(
      toModelReply(completion({ reasoning: 'sent', content: '<thinking>t</thinking>' }), true).reasoning,
    ).toBe('sent');
    expect(toModelReply(completion({ content: '<thinking> t </thinking>x' }), true).reasoning).toBe('t');
    expect(toModelReply(completion({ content: 'x' }), true)).not.toHaveProperty('reasoning');
  });
});

describe('reasoningOf', () => {
  it('joins the thinking blocks, trimmed, one a line', () => {
    expect(reasoningOf('', '<thinking> a </thinking> text <thinking>\nb\n</thinking>')).toBe('a\nb');
    expect(reasoningOf('', 'no blocks')).toBe('');
    expect(reasoningOf('', '<thinking>never closed')).toBe('');
    expect(reasoningOf('r', 'no blocks')).toBe('r');
  });
});
