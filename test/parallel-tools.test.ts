import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn, assertToolCallsAnswered, eachWire } from './support/harness.js';

function timedTool(name: string, ms: number, spans: Record<string, [number, number]>) {
  return defineTool({
    name,
    description: `waits ${ms} ms`,
    parameters: z.object({ label: z.string() }),
    execute: async ({ label }) => {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, ms));
      spans[label] = [start, performance.now()];
      return `done ${label}`;
    },
  });
}

eachWire(() => {
  describe('parallel tool calls', () => {
    it.each([true, false])(
      'runs all calls of one message at once and keeps call order (stream=%s)',
      async (stream) => {
        const spans: Record<string, [number, number]> = {};
        const { agent, server } = await agentOn(
          {
            turns: [
              {
                toolCalls: [
                  { name: 'slow', arguments: { label: 'a' } },
                  { name: 'slow', arguments: { label: 'b' } },
                  { name: 'fast', arguments: { label: 'c' } },
                ],
              },
              { content: 'all done' },
              { toolCalls: [{ name: 'fast', arguments: { label: 'd' } }] },
              { content: 'second turn done' },
            ],
          },
          { tools: [timedTool('slow', 150, spans), timedTool('fast', 10, spans)], stream },
        );
        const first = await agent.send('go');
        expect(first.response).toBe('all done');
        const [a, b] = [spans.a!, spans.b!];
        // Overlap: b started before a ended (and the other way round).
        expect(b[0]).toBeLessThan(a[1]);
        expect(a[0]).toBeLessThan(b[1]);
        // Tool messages are appended in call order although `c` finished first.
        const toolIds = first.messages
          .filter((m) => m.role === 'tool')
          .map((m) => (m as { tool_call_id: string }).tool_call_id);
        expect(toolIds).toEqual(['call_0_0', 'call_0_1', 'call_0_2']);
        // The second request carried all three results.
        expect(server.requests[1]!.messages.filter((m) => m.role === 'tool')).toHaveLength(3);

        const second = await agent.send('again');
        expect(second.response).toBe('second turn done');
        expect(second.iterations).toBe(2);
        expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);
        assertToolCallsAnswered(second.messages);
      },
    );

    it('starts a call whose arguments are complete before the stream ends', async () => {
      const starts: Record<string, number> = {};
      const probe = defineTool({
        name: 'probe',
        description: 'records when it started',
        parameters: z.object({ label: z.string() }),
        execute: ({ label }) => {
          starts[label] = performance.now();
          return 'ok';
        },
      });
      const { agent, events } = await agentOn(
        {
          turns: [
            {
              chunkDelayMs: 40,
              chunkSize: 4,
              toolCalls: [
                { name: 'probe', arguments: { label: 'first' } },
                { name: 'probe', arguments: { label: 'second' } },
              ],
            },
            { content: 'ok' },
          ],
        },
        { tools: [probe] },
      );
      let streamEnd = 0;
      agent.on('usage', () => {
        if (!streamEnd) streamEnd = performance.now();
      });
      await agent.send('go');
      expect(starts.first).toBeDefined();
      // The first call started while the second call's arguments were still streaming (40 ms per chunk).
      expect(starts.first!).toBeLessThan(streamEnd - 40);
      const startEvents = events.filter((e) => e.type === 'tool_call_start');
      expect(startEvents).toHaveLength(2);
    });
  });
});
