/**
 * A call is started before its stream ends only when its arguments are certainly complete: the next
 * call began, or the stream said the message ended with tool calls. Arguments that happen to parse
 * are not enough (`finish_reason: 'length'` may still cut the message). Driven through the real SDK
 * against the scripted server; the pure rules are in stream-call-assembly.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';
import { echoTool } from './support/recording-tools.js';

describe('early tool start waits for certainty', () => {
  it.each(['length', 'content_filter'] as const)(
    'does not start a call whose arguments parse when the message ends with %s',
    async (finishReason) => {
      const executions: string[] = [];
      const { agent } = await agentOn(
        {
          turns: [
            {
              content: 'Let me echo',
              toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }],
              finishReason,
            },
          ],
        },
        { tools: [echoTool(executions)] },
      );
      const result = await agent.send('go');
      expect(result.terminateReason).toBe(finishReason);
      // The call's arguments were valid JSON, but the model's output was cut: nothing ran.
      expect(executions).toEqual([]);
      const answer = result.messages.find((m) => m.role === 'tool');
      expect(answer?.content).toMatch(/^Not run: /);
      assertToolCallsAnswered(result.messages);
    },
  );

  it('starts the calls of a message that ends with tool_calls, each once', async () => {
    const executions: string[] = [];
    const { agent, events } = await agentOn(
      {
        turns: [
          {
            chunkSize: 3,
            toolCalls: [
              { name: 'echo', arguments: { text: 'a' } },
              { name: 'echo', arguments: { text: 'b' } },
            ],
          },
          { content: 'done' },
        ],
      },
      { tools: [echoTool(executions)] },
    );
    const result = await agent.send('go');
    expect(result.response).toBe('done');
    expect(executions.sort()).toEqual(['a', 'b']);
    expect(events.filter((e) => e.type === 'tool_call_start')).toHaveLength(2);
    assertToolCallsAnswered(result.messages);
  });
});
