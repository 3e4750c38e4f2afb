import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn } from './support/harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

describe('the Responses API wire', () => {
  it.each([true, false])('runs a tool turn with reasoning (stream=%s)', async (stream) => {
    const { agent, server, events } = await agentOn(
      {
        turns: [
          { reasoning: 'I should echo.', toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] },
          { content: 'done' },
        ],
      },
      { tools: [echo], stream, api: 'responses' },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('done');
    expect(
      events.filter((e) => e.type === 'thinking').map((e) => (e as { content: string }).content),
    ).toEqual(['I should echo.']);
    const assistant = result.messages.find((m) => m.role === 'assistant')!;
    expect(assistant).toMatchObject({
      reasoning_items: [{ type: 'reasoning', summary: [{ text: 'I should echo.' }] }],
    });
    expect(server.requests[1]!.messages.find((m) => m.role === 'assistant')).toMatchObject({
      role: 'assistant',
      reasoning_items: [{ type: 'reasoning' }],
    });
  });
});
