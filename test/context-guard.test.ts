import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';

const dump = defineTool({
  name: 'dump',
  description: 'returns a large text',
  parameters: z.object({ file: z.string() }),
  execute: ({ file }) => `${file}: ${'lorem ipsum dolor sit amet '.repeat(300)}`,
});

describe('context window in the loop', () => {
  it('warns, then prunes old tool results from the request while the conversation stays whole', async () => {
    const turns = Array.from({ length: 6 }, (_, i) => ({
      toolCalls: [{ name: 'dump', arguments: { file: `f${i}.txt` } }],
    }));
    const { agent, server, events } = await agentOn(
      { turns: [...turns, { content: 'read them all' }] },
      {
        tools: [dump],
        contextWindow: { contextWindow: 8_000, reserveTokens: 1_000 },
        loopControlTools: false,
      },
    );
    const result = await agent.send('read six files');
    expect(result.response).toBe('read them all');
    const pruned = events.filter((e) => e.type === 'context_pruned');
    expect(pruned.length).toBeGreaterThan(0);
    expect(events.some((e) => e.type === 'limit_warning' && e.limit === 'context_window')).toBe(true);
    // The transcript keeps every result in full; the last request carried placeholders for old ones.
    const fullResults = result.messages.filter((m) => m.role === 'tool' && String(m.content).length > 5_000);
    expect(fullResults).toHaveLength(6);
    const last = server.requests.at(-1)!;
    const placeholders = last.messages.filter((m) => m.role === 'tool' && /pruned/.test(String(m.content)));
    expect(placeholders.length).toBeGreaterThan(0);
    expect(String(placeholders[0]!.content)).toMatch(/dump/);
    assertToolCallsAnswered(last.messages as never);
    expect(last.messages[0]).toEqual(result.messages[0]);
  });

  it('sends the conversation untouched when it is far below the window', async () => {
    const { agent, server, events } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'dump', arguments: { file: 'a' } }] }, { content: 'ok' }] },
      { tools: [dump] },
    );
    const result = await agent.send('go');
    expect(events.some((e) => e.type === 'context_pruned')).toBe(false);
    expect(server.requests[1]!.messages).toEqual(JSON.parse(JSON.stringify(result.messages.slice(0, -1))));
  });
});
