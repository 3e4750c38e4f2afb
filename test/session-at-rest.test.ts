/**
 * What a saved session keeps in memory at rest (issue 37): one copy of its conversation. The record
 * the agent keeps (`agent.sessionRecord`) holds the snapshot as written, whose messages are the
 * conversation's own objects, not a second copy read back from the store.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, FileSessionStore, MemorySessionStore } from '../src/index.js';
import { agentAt, serve, testDir } from './support/harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

const scenario = {
  turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] }, { content: 'done' }],
};

describe('a saved session at rest', () => {
  it.each(['memory', 'file'] as const)(
    'keeps one copy of a short conversation: the record shares its messages (%s store)',
    async (kind) => {
      const store =
        kind === 'memory'
          ? new MemorySessionStore()
          : new FileSessionStore({ dir: await testDir('at-rest-'), fsync: false });
      const agent = agentAt(await serve(scenario), { tools: [echo], store, session: 'rest' });
      const result = await agent.send('go');
      expect(result.success).toBe(true);
      await agent.flush();
      const record = agent.sessionRecord!;
      const kept = (record.snapshot as { context: { messages: unknown[] } }).context.messages;
      expect(kept).toHaveLength(agent.messages.length);
      for (const [i, message] of agent.messages.entries()) expect(kept[i]).toBe(message);
      // What the store holds is the same record.
      const loaded = await store.load('rest');
      expect(loaded?.snapshot).toEqual(JSON.parse(JSON.stringify(record.snapshot)));
      expect(loaded?.state).toBe(record.state);
    },
  );
});
