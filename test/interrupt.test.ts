import { describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn, assertToolCallsAnswered, eachWire, nextEvent } from './support/harness.js';

eachWire(() => {
  describe('interrupt', () => {
    it('aborts running tools through their signal and answers every call with "interrupted"', async () => {
      let aborted = false;
      const hang = defineTool({
        name: 'hang',
        description: 'never finishes on its own',
        parameters: z.object({}),
        execute: (_args, { signal }) =>
          new Promise((_, reject) => {
            signal.addEventListener('abort', () => {
              aborted = true;
              reject(signal.reason);
            });
          }),
      });
      const { agent, server } = await agentOn(
        {
          turns: [
            {
              toolCalls: [
                { name: 'hang', arguments: {} },
                { name: 'hang', arguments: {} },
              ],
            },
            { content: 'continuing after the interrupt' },
          ],
        },
        { tools: [hang] },
      );
      const turn = agent.send('go');
      await waitFor(agent.actor, (s) => s.matches('ExecutingTool'));
      agent.interrupt();
      const result = await turn;
      expect(result.terminateReason).toBe('interrupted');
      expect(agent.state).toBe('Interrupted');
      expect(aborted).toBe(true);
      const tools = result.messages.filter((m) => m.role === 'tool');
      expect(tools).toHaveLength(2);
      for (const t of tools) expect(String(t.content)).toMatch(/interrupted/);
      assertToolCallsAnswered(result.messages);

      // A new message continues the same conversation.
      const next = await agent.send('please go on');
      expect(next.response).toBe('continuing after the interrupt');
      expect(server.requests[1]!.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
    });

    it('aborts the model request mid-stream and keeps the streamed text', async () => {
      const { agent, server } = await agentOn({
        turns: [
          { content: 'a long answer that streams slowly '.repeat(5), chunkDelayMs: 30, chunkSize: 5 },
          { content: 'next' },
        ],
      });
      // Interrupt once "a long answer" has streamed (three chunks), however slowly the machine runs.
      let streamed = '';
      const enough = new Promise<void>((resolve) =>
        agent.on('content_chunk', (e) => {
          streamed += e.delta;
          if (streamed.startsWith('a long answer')) resolve();
        }),
      );
      const turn = agent.send('talk');
      await enough;
      const t0 = performance.now();
      agent.interrupt();
      const result = await turn;
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(result.terminateReason).toBe('interrupted');
      const last = result.messages.at(-1)!;
      expect(last.role).toBe('assistant');
      expect(String(last.content)).toMatch(/^a long answer.*\[interrupted\]$/s);
      expect(result.response.length).toBeGreaterThan(0);
      // RESUME continues the same turn with a new model call.
      const resumed = await agent.resume();
      expect(resumed.response).toBe('next');
      expect(server.requests).toHaveLength(2);
    });

    it('records and answers a call started from a stream that was interrupted', async () => {
      let aborted = false;
      const hang = defineTool({
        name: 'hang',
        description: 'never finishes on its own',
        parameters: z.object({ n: z.number() }),
        execute: (_args, { signal }) =>
          new Promise((_, reject) => {
            signal.addEventListener('abort', () => {
              aborted = true;
              reject(signal.reason);
            });
          }),
      });
      const { agent } = await agentOn(
        {
          turns: [
            {
              chunkDelayMs: 30,
              chunkSize: 3,
              toolCalls: [
                { name: 'hang', arguments: { n: 1 } },
                { name: 'hang', arguments: { n: 2 } },
              ],
            },
          ],
        },
        { tools: [hang] },
      );
      const started = nextEvent(agent, 'tool_call_start');
      const turn = agent.send('go');
      await started;
      expect(agent.state).toBe('Thinking');
      agent.interrupt();
      const result = await turn;
      expect(aborted).toBe(true);
      const assistant = result.messages.at(-2)!;
      expect(assistant).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_0_0' }] });
      expect(result.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_0_0' });
      assertToolCallsAnswered(result.messages);
    });

    it('interrupts while waiting for approval', async () => {
      const risky = defineTool({
        name: 'risky',
        description: 'needs approval',
        parameters: z.object({}),
        needsApproval: true,
        execute: () => 'ran',
      });
      const { agent } = await agentOn(
        { turns: [{ toolCalls: [{ name: 'risky', arguments: {} }] }] },
        { tools: [risky] },
      );
      const requested = nextEvent(agent, 'approval_requested');
      const turn = agent.send('go');
      await requested;
      agent.interrupt();
      const result = await turn;
      expect(result.terminateReason).toBe('interrupted');
      expect(agent.pendingApprovals).toEqual([]);
      assertToolCallsAnswered(result.messages);
    });
  });
});
