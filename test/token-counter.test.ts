import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/defaults.js';
import { resolveModelWindow } from '../src/prompt/model-windows.js';
import {
  REPLY_PRIMING_TOKENS,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_TOOL_CALL,
  TokenCounter,
  tokenCounterFor,
} from '../src/prompt/token-counter.js';

/** A counter that records how many strings it had to tokenize. */
class CountingCounter extends TokenCounter {
  calls = 0;
  override countText(text: string): number {
    this.calls++;
    return super.countText(text);
  }
}

const readFileTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file of the bundle.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the bundle root.' },
        mode: { type: 'string', description: 'How to read', enum: ['text', 'lines'] },
      },
      required: ['path'],
    },
  },
};

describe('TokenCounter', () => {
  const counter = new TokenCounter('o200k_base');

  it('counts text with the chosen encoding', () => {
    const text = 'Tokenizers split text into pieces — “unicode” too: 東京, 🚀.';
    expect(counter.countText(text)).toBe(o200k.countTokens(text));
    expect(new TokenCounter('cl100k_base').countText(text)).toBe(cl100k.countTokens(text));
    expect(counter.countText('')).toBe(0);
  });

  it('counts special tokens in user text as plain text instead of throwing', () => {
    expect(counter.countText('see <|endoftext|> here')).toBeGreaterThan(3);
  });

  it('counts plain chat messages exactly as the chat format encodes them', () => {
    const chat = [
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: 'Summarise the design note in two lines.' },
      { role: 'assistant', content: 'Sure: one statechart runs the loop; effects are actors.' },
    ] as const;
    const expected = o200k.encodeChat(chat, 'gpt-4o').length;
    expect(counter.countPrompt([...chat])).toBe(expected);
    expect(new TokenCounter('cl100k_base').countPrompt([...chat])).toBe(
      cl100k.encodeChat(chat, 'gpt-4').length,
    );
  });

  it('adds the per-message overhead, names, and reply priming', () => {
    const plain: ChatCompletionMessageParam = { role: 'user', content: 'hi' };
    const named: ChatCompletionMessageParam = { role: 'user', content: 'hi', name: 'alice' };
    expect(counter.countMessage(plain)).toBe(TOKENS_PER_MESSAGE + 1 + 1);
    expect(counter.countMessage(named)).toBe(counter.countMessage(plain) + 1 + counter.countText('alice'));
    expect(counter.countPrompt([])).toBe(REPLY_PRIMING_TOKENS);
  });

  it('counts tool-call names and arguments', () => {
    const args = JSON.stringify({ path: 'docs/design.md', mode: 'text' });
    const message: ChatCompletionMessageParam = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: args } }],
    };
    expect(counter.countMessage(message)).toBe(
      TOKENS_PER_MESSAGE +
        counter.countText('assistant') +
        TOKENS_PER_TOOL_CALL +
        counter.countText('read_file') +
        counter.countText(args),
    );
  });

  it('counts content parts: text by tokens, images by a detail-based estimate', () => {
    const message: ChatCompletionMessageParam = {
      role: 'user',
      content: [
        { type: 'text', text: 'what is in this picture?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
      ],
    };
    expect(counter.countMessage(message)).toBe(
      TOKENS_PER_MESSAGE + counter.countText('user') + counter.countText('what is in this picture?') + 85,
    );
  });

  it('counts tool definitions, more for richer schemas, none for no tools', () => {
    expect(counter.countTools(undefined)).toBe(0);
    expect(counter.countTools([])).toBe(0);
    const one = counter.countTools([readFileTool]);
    expect(one).toBeGreaterThan(20);
    const nested: ChatCompletionTool = {
      type: 'function',
      function: {
        name: 'save_output',
        description: 'Save sections.',
        parameters: {
          type: 'object',
          properties: {
            sections: {
              type: 'array',
              description: 'Sections to save',
              items: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } } },
            },
          },
        },
      },
    };
    expect(counter.countTools([readFileTool, nested])).toBeGreaterThan(one + counter.countText('"title"'));
    expect(counter.countPrompt([], [readFileTool])).toBe(REPLY_PRIMING_TOKENS + one);
  });

  it('counts a message once: the second pass over a long history tokenizes nothing', () => {
    const counting = new CountingCounter('o200k_base');
    const history: ChatCompletionMessageParam[] = Array.from({ length: 1_000 }, (_, i) =>
      i % 2 === 0
        ? { role: 'user', content: `question ${i}` }
        : { role: 'assistant', content: `answer ${i}` },
    );
    const first = counting.countPrompt(history);
    const callsAfterFirst = counting.calls;
    expect(callsAfterFirst).toBeGreaterThanOrEqual(1_000);
    expect(counting.countPrompt(history)).toBe(first);
    expect(counting.calls).toBe(callsAfterFirst);
    expect(counting.isCached(history[999]!)).toBe(true);
  });

  it('shares one counter per encoding', () => {
    expect(tokenCounterFor('o200k_base')).toBe(tokenCounterFor());
    expect(tokenCounterFor('cl100k_base')).not.toBe(tokenCounterFor('o200k_base'));
  });
});

describe('resolveModelWindow', () => {
  it.each([
    ['gpt-4o', 128_000, 'o200k_base'],
    ['gpt-4o-mini-2024-07-18', 128_000, 'o200k_base'],
    ['gpt-4.1-mini', 1_047_576, 'o200k_base'],
    ['o3-mini', 200_000, 'o200k_base'],
    ['o1-mini', 128_000, 'o200k_base'],
    ['gpt-5', 400_000, 'o200k_base'],
    ['gpt-5.1', 400_000, 'o200k_base'],
    ['gpt-5-chat-latest', 128_000, 'o200k_base'],
    ['openai/gpt-4o', 128_000, 'o200k_base'],
    ['gpt-4', 8_192, 'cl100k_base'],
    ['gpt-4-turbo', 128_000, 'cl100k_base'],
    ['gpt-3.5-turbo', 16_385, 'cl100k_base'],
  ] as const)('%s: %i tokens, %s', (model, contextWindow, encoding) => {
    expect(resolveModelWindow(model)).toEqual({ contextWindow, encoding, known: true });
  });

  it('gives an unknown model o200k and the default window, overridable', () => {
    expect(resolveModelWindow('llama3.1:8b')).toEqual({
      contextWindow: DEFAULTS.unknownModelContextWindow,
      encoding: 'o200k_base',
      known: false,
    });
    expect(resolveModelWindow('llama3.1:8b', { contextWindow: 8_192 }).contextWindow).toBe(8_192);
    expect(resolveModelWindow('gpt-4o', { encoding: 'cl100k_base' }).encoding).toBe('cl100k_base');
  });
});
