import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { agentOn } from './support/harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

describe('events', () => {
  it('carry session, turn, iteration and time, in the order a UI expects', async () => {
    const lines: string[] = [];
    const { agent, events } = await agentOn(
      {
        turns: [
          {
            content: '<thinking>I should echo first.</thinking>',
            toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }],
          },
          { content: 'said hi' },
        ],
      },
      { tools: [echo], debug: (line) => lines.push(line), sessionId: 'session-events-1' },
    );
    const result = await agent.send('say hi');
    expect(result.response).toBe('said hi');
    expect(events[0]).toMatchObject({ type: 'state_change', state: 'AwaitingInput', turn: 0 });
    const turnEvents = events.slice(events.findIndex((e) => e.type === 'turn_start'));
    for (const e of turnEvents) {
      expect(e.sessionId).toBe('session-events-1');
      expect([e.type, e.turn]).toEqual([e.type, 1]);
      expect(typeof e.timestamp).toBe('number');
    }
    // The call starts as soon as its arguments are certainly complete: before the reply's end when
    // the stream goes on past that network read, with it otherwise. Its start and end are checked
    // apart from the order of the model's events.
    const types = events.map((e) => e.type);
    expect(types.indexOf('tool_call_start')).toBeGreaterThan(types.indexOf('iteration'));
    expect(types.indexOf('tool_call_end')).toBeGreaterThan(types.indexOf('tool_call_start'));
    expect(types.indexOf('tool_call_end')).toBeLessThan(types.lastIndexOf('iteration'));
    const modelOrder = types.filter(
      (t) => !['content_chunk', 'state_change', 'tool_call_start', 'tool_call_end'].includes(t),
    );
    expect(modelOrder).toEqual([
      'turn_start',
      'iteration',
      'model_call',
      'thinking',
      'usage',
      'iteration',
      'model_call',
      'usage',
      'turn_end',
    ]);
    const thinking = events.find((e) => e.type === 'thinking');
    expect(thinking).toMatchObject({ content: 'I should echo first.', iteration: 1 });
    const end = events.find((e) => e.type === 'tool_call_end');
    expect(end).toMatchObject({ name: 'echo', toolCallId: 'call_0_0', args: { text: 'hi' }, result: 'hi' });
    expect(events.find((e) => e.type === 'turn_end')).toMatchObject({
      terminateReason: 'completed',
      iterations: 2,
    });
    // One debug line per model call, one per tool call, one at the end of the turn.
    expect(lines.filter((l) => /model call \d+ ms/.test(l))).toHaveLength(2);
    expect(lines.filter((l) => /tool echo \(call_0_0\) [\d.]+ ms ok/.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/turn ended: completed after 2 model calls/);
  });
});
