import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { ContextWindow, placeholderText, prepareRequest } from '../src/prompt/context-window.js';
import { TokenCounter } from '../src/prompt/token-counter.js';

type Message = ChatCompletionMessageParam;

const counter = new TokenCounter('o200k_base');
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 50}`).join(' ');

const system = (content: string): Message => ({ role: 'system', content });
const user = (content: string): Message => ({ role: 'user', content });
const text = (content: string): Message => ({ role: 'assistant', content });
function call(id: string, name: string, args: unknown): Message {
  return {
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  };
}
const result = (id: string, content: string): Message => ({ role: 'tool', tool_call_id: id, content });

/** system, old turn with two big reads, current turn with one small read. */
function history(): Message[] {
  return [
    system('You are the analyst agent.'),
    system('Critical action: config.yaml loaded: user_name=Ada.'),
    user('Read the PRD.'),
    call('c1', 'read_file', { path: 'docs/prd.md' }),
    result('c1', words(2_000)),
    call('c2', 'read_file', { path: 'docs/architecture.md' }),
    result('c2', words(2_000)),
    text('Both read.'),
    user('Now summarise the epic list.'),
    call('c3', 'read_file', { path: 'docs/epics.md' }),
    result('c3', words(300)),
  ];
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const contentOf = (m: Message | undefined) => (typeof m?.content === 'string' ? m.content : '');

describe('ContextWindow.prepareRequest', () => {
  it('returns the same array, without warning, below the warning share', () => {
    const messages = history();
    const full = counter.countPrompt(messages);
    const window = new ContextWindow({ contextWindow: full * 2, reserveTokens: 0, counter });
    const prepared = window.prepareRequest(messages);
    expect(prepared.messages).toBe(messages);
    expect(prepared).toMatchObject({ tokens: full, budget: full * 2, fits: true });
    expect(prepared.warning).toBeUndefined();
    expect(prepared.pruned).toBeUndefined();
  });

  it('warns above the share and still sends everything while within the budget', () => {
    const messages = history();
    const full = counter.countPrompt(messages);
    const prepared = prepareRequest(messages, {
      contextWindow: full + 10,
      reserveTokens: 0,
      warnShare: 0.8,
      counter,
    });
    expect(prepared.messages).toBe(messages);
    expect(prepared.warning).toEqual({ used: full, max: full + 10 });
    expect(prepared.pruned).toBeUndefined();
  });

  it('counts the tool definitions against the window', () => {
    const tools: ChatCompletionTool[] = [
      { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: {} } },
    ];
    const messages = history();
    const prepared = prepareRequest(messages, { contextWindow: 1_000_000, tools, counter });
    expect(prepared.tokens).toBe(counter.countPrompt(messages) + counter.countTools(tools));
  });

  it('replaces the oldest tool results with placeholders naming the call, leaving the transcript alone', () => {
    const messages = deepFreeze(history());
    const snapshot = structuredClone(messages);
    const full = counter.countPrompt(messages);
    const oneRead = counter.countMessage(messages[4]!);
    // Room for everything but one big read.
    const budget = full - Math.floor(oneRead / 2);
    const prepared = prepareRequest(messages, { contextWindow: budget, reserveTokens: 0, counter });

    expect(messages).toEqual(snapshot);
    expect(prepared.fits).toBe(true);
    expect(prepared.tokens).toBeLessThanOrEqual(budget);
    expect(prepared.tokens).toBe(counter.countPrompt(prepared.messages));
    expect(prepared.messages).toHaveLength(messages.length);
    const pruned = prepared.messages[4]!;
    expect(pruned).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: `[pruned: result of read_file {"path":"docs/prd.md"} (${oneRead.toLocaleString('en-US')} tokens) — call it again if needed]`,
    });
    // Only the oldest result went; every other message is the original object.
    prepared.messages.forEach((m, i) => {
      if (i !== 4) expect(m).toBe(messages[i]);
    });
    expect(prepared.pruned).toEqual({
      prunedMessages: 1,
      droppedMessages: 0,
      removedTokens: full - prepared.tokens,
      tokensBefore: full,
      tokensAfter: prepared.tokens,
      prunedIds: ['c1'],
    });
  });

  it('builds the same placeholder object on every call, so the request prefix stays stable', () => {
    const messages = history();
    const window = new ContextWindow({
      contextWindow: counter.countPrompt(messages) - 100,
      reserveTokens: 0,
      counter,
    });
    const a = window.prepareRequest(messages);
    const b = window.prepareRequest([...messages, user('and?')]);
    expect(a.messages[4]).toBe(b.messages[4]);
  });

  it('drops whole old groups when placeholders are not enough, a tool call with its results', () => {
    const bigUser = user(words(3_000));
    const messages = [
      system('sys'),
      bigUser,
      call('c1', 'read_file', { path: 'a' }),
      result('c1', words(200)),
      text('done'),
      user('next question'),
      text('answer'),
    ];
    const tail = counter.countMessage(messages[5]!) + counter.countMessage(messages[6]!);
    const budget = counter.countPrompt([messages[0]!]) + tail + 400;
    const prepared = prepareRequest(messages, { contextWindow: budget, reserveTokens: 0, counter });
    expect(prepared.fits).toBe(true);
    expect(prepared.messages[0]).toBe(messages[0]);
    expect(prepared.messages).not.toContain(bigUser);
    expect(prepared.messages.slice(-2)).toEqual(messages.slice(-2));
    // Either the call and its result are both there or both gone.
    const hasCall = prepared.messages.includes(messages[2]!);
    const hasResult = prepared.messages.some((m) => m.role === 'tool' && m.tool_call_id === 'c1');
    expect(hasCall).toBe(hasResult);
    expect(prepared.pruned?.droppedMessages).toBeGreaterThanOrEqual(1);
  });

  it('restores placeholders the dropped groups made room for, newest first', () => {
    const messages = [
      system('sys'),
      user(words(3_000)),
      call('c1', 'read_file', { path: 'a' }),
      result('c1', words(400)),
      call('c2', 'read_file', { path: 'b' }),
      result('c2', words(400)),
      user('next'),
    ];
    const full = counter.countPrompt(messages);
    const budget = full - counter.countMessage(messages[1]!) + 10;
    const prepared = prepareRequest(messages, { contextWindow: budget, reserveTokens: 0, counter });
    // The big user message went; the tool results it made room for are back in full.
    expect(prepared.messages).toEqual([messages[0], ...messages.slice(2)]);
    expect(prepared.pruned).toMatchObject({ droppedMessages: 1, prunedMessages: 1, prunedIds: [] });
  });

  it('keeps the leading system messages and the current turn even when that cannot fit', () => {
    const messages = [system(words(500)), user('q1'), text('a1'), user(words(500)), text('a2')];
    const prepared = prepareRequest(messages, { contextWindow: 300, reserveTokens: 0, counter });
    expect(prepared.fits).toBe(false);
    expect(prepared.messages).toEqual([messages[0], messages[3], messages[4]]);
    expect(prepared.tokens).toBe(counter.countPrompt(prepared.messages));
  });

  it('as a last resort shrinks older results of the current turn, never the latest ones', () => {
    const messages = [
      system('sys'),
      user('Run the whole workflow.'),
      call('c1', 'read_file', { path: 'workflow.yaml' }),
      result('c1', words(1_500)),
      call('c2', 'read_file', { path: 'instructions.md' }),
      result('c2', words(1_500)),
      call('c3', 'read_file', { path: 'template.md' }),
      result('c3', words(1_500)),
    ];
    const budget = counter.countPrompt(messages) - 1_000;
    const prepared = prepareRequest(messages, { contextWindow: budget, reserveTokens: 0, counter });
    expect(prepared.fits).toBe(true);
    expect(contentOf(prepared.messages[3])).toMatch(
      /^\[pruned: result of read_file \{"path":"workflow.yaml"\}/,
    );
    expect(prepared.messages[5]).toBe(messages[5]);
    expect(prepared.messages[7]).toBe(messages[7]);

    const strict = prepareRequest(messages, {
      contextWindow: budget,
      reserveTokens: 0,
      counter,
      pruneCurrentTurn: false,
    });
    expect(strict.fits).toBe(false);
    expect(strict.messages).toBe(messages);
  });

  it('derives the budget from the window and the completion reserve', () => {
    expect(new ContextWindow({ contextWindow: 128_000 }).budget).toBe(128_000 - 16_384);
    expect(new ContextWindow({ contextWindow: 8_192 }).budget).toBe(8_192 - 2_048);
    expect(new ContextWindow({ contextWindow: 128_000 }).warnAt).toBe(102_400);
    expect(new ContextWindow({ contextWindow: 10_000, reserveTokens: 5_000 }).warnAt).toBe(5_000);
  });

  it('names unknown calls generically and shortens long arguments', () => {
    expect(placeholderText(undefined, 1_234)).toBe(
      '[pruned: result of a tool call (1,234 tokens) — call it again if needed]',
    );
    const long = placeholderText(
      {
        id: 'x',
        type: 'function',
        function: { name: 'grep', arguments: JSON.stringify({ q: 'x'.repeat(500) }) },
      },
      10,
    );
    expect(long.length).toBeLessThan(220);
    expect(long).toContain('…');
  });

  it('builds a 1,000-message request in a few milliseconds once counts are cached (timing log)', () => {
    const messages: Message[] = [system(words(800))];
    for (let i = 0; messages.length < 1_000; i++) {
      messages.push(user(`step ${i}`));
      messages.push(call(`c${i}`, 'read_file', { path: `docs/file-${i}.md` }));
      messages.push(result(`c${i}`, words(150 + (i % 7) * 40)));
      messages.push(text(`noted ${i}`));
    }
    const full = counter.countPrompt(messages);
    const cold = new TokenCounter('o200k_base');
    const window = new ContextWindow({
      contextWindow: Math.floor(full / 2),
      reserveTokens: 0,
      counter: cold,
    });
    let started = performance.now();
    window.prepareRequest(messages);
    const first = performance.now() - started;
    const runs = 20;
    started = performance.now();
    let prepared = window.prepareRequest(messages);
    for (let i = 1; i < runs; i++) prepared = window.prepareRequest(messages);
    const warm = (performance.now() - started) / runs;
    console.info(
      `context window, ${messages.length} messages (${full.toLocaleString('en-US')} tokens, pruned ${prepared.pruned?.prunedMessages} to fit ${window.budget.toLocaleString('en-US')}): first call ${first.toFixed(1)} ms (tokenizing every message), then ${warm.toFixed(2)} ms per call`,
    );
    expect(prepared.fits).toBe(true);
  });
});
