/**
 * A long autonomous turn: 200 tool calls, each returning about 2 KB, against a 16k-token context
 * window. Every request the server receives must fit the window's budget, the agent's own
 * transcript keeps every result whole, and the figures (from `context_pruned` events and from
 * counting what the server actually received) are printed for docs/reliability.md.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentEvent, createAgent, defineTool, type Message } from '../src/index.js';
import { startScriptedServer } from '../src/testing/index.js';
import { tokenCounterFor } from '../src/unstable.js';
import { assertToolCallsAnswered } from './support/harness.js';

const CALLS = 200;
const WINDOW = 16_000;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

/** About 2 KB of deterministic text per chunk. */
function chunk(n: number): string {
  const words: string[] = [];
  let size = 0;
  for (let i = 0; size < 2_000; i++) {
    const word = `${WORDS[(n * 7 + i * 3) % WORDS.length]}${(n * 31 + i) % 97}`;
    words.push(word);
    size += word.length + 1;
  }
  return `chunk ${n}: ${words.join(' ')}`;
}

describe('a long run stays inside a small context window', () => {
  it(`${CALLS} tool calls of ~2 KB each against a ${WINDOW.toLocaleString('en')}-token window`, async () => {
    const readChunk = defineTool({
      name: 'read_chunk',
      description: 'reads one chunk of a large document',
      parameters: z.object({ n: z.number().int() }),
      execute: ({ n }) => chunk(n),
    });
    const server = await startScriptedServer({
      respond: (_request, index) =>
        index < CALLS
          ? { toolCalls: [{ name: 'read_chunk', arguments: { n: index } }] }
          : { content: `Read all ${CALLS} chunks.` },
    });
    const agent = createAgent({
      baseURL: server.url,
      apiKey: 'test-key',
      model: 'gpt-4o-mini',
      instructions: 'Read the whole document, one chunk at a time.',
      tools: [readChunk],
      limits: { maxIterations: CALLS + 10 },
      contextWindow: { contextWindow: WINDOW },
    });
    const pruned: AgentEvent<'context_pruned'>[] = [];
    agent.on('context_pruned', (e) => pruned.push(e));
    try {
      const t0 = performance.now();
      const result = await agent.send('Read the document.');
      const ms = performance.now() - t0;
      expect(result.terminateReason).toBe('completed');
      expect(result.iterations).toBe(CALLS + 1);
      assertToolCallsAnswered(result.messages);

      // The transcript keeps every result whole; only requests were pruned.
      const toolMessages = result.messages.filter((m) => m.role === 'tool');
      expect(toolMessages).toHaveLength(CALLS);
      expect(toolMessages.every((m, i) => m.content === chunk(i))).toBe(true);

      // Every request the server received fits the budget (window minus a quarter held for the reply).
      const counter = tokenCounterFor('o200k_base');
      const tools = agent.registry.toJSON();
      const budget = WINDOW - WINDOW / 4;
      const sent = server.requests.map((r) => counter.countPrompt(r.messages as Message[], tools));
      expect(Math.max(...sent)).toBeLessThanOrEqual(budget);
      const full = counter.countPrompt(result.messages.slice(0, -1), tools);
      const last = pruned.at(-1)!;
      expect(pruned.length).toBeGreaterThan(0);
      expect(last.tokensBefore).toBe(full);
      expect(last.tokensAfter).toBeLessThanOrEqual(budget);

      const figures = {
        calls: CALLS,
        window: WINDOW,
        budget,
        requests: server.requests.length,
        prunedRequests: pruned.length,
        firstPrunedRequest: pruned[0]!.iteration,
        lastRequestTokensBefore: last.tokensBefore,
        lastRequestTokensAfter: last.tokensAfter,
        lastRequestRemovedTokens: last.removedTokens,
        lastRequestPrunedMessages: last.prunedMessages,
        largestRequestSent: Math.max(...sent),
        transcriptChars: result.messages.reduce((n, m) => n + JSON.stringify(m).length, 0),
        lastRequestChars: JSON.stringify(server.requests.at(-1)!.messages).length,
        wallMs: Math.round(ms),
      };
      console.log(`\nLong run figures\n${JSON.stringify(figures, null, 2)}\n`);
    } finally {
      agent.stop();
      await server.close();
    }
  }, 120_000);
});
