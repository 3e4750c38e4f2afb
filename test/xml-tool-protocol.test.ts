import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { parseXmlToolCalls, toXmlRequestMessages } from '../src/llm/xml-tool-calls.js';
import { agentOn, assertToolCallsAnswered } from './support/harness.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

describe('XML tool-call protocol', () => {
  it('parses tool blocks, keeping a malformed one as a call that will fail readably', () => {
    const calls = parseXmlToolCalls(
      '<thinking>add them</thinking>\n<tool>{"server_name":"local","tool_name":"add","arguments":{"a":1,"b":2}}</tool>' +
        '<tool>{"tool_name": "add", "arguments": {"a": 1,</tool><tool>{"tool_name":"noargs"}</tool>',
    );
    expect(calls).toEqual([
      { name: 'add', argsText: '{"a":1,"b":2}' },
      { name: 'add', argsText: '{"tool_name": "add", "arguments": {"a": 1,' },
      { name: 'noargs', argsText: '{}' },
    ]);
  });

  it.each([true, false])('runs the loop without native tools (stream=%s)', async (stream) => {
    const { agent, server, events } = await agentOn(
      {
        turns: [
          {
            content:
              '<thinking>I need the sum.</thinking>\n<tool>{"server_name":"local","tool_name":"add","arguments":{"a":2,"b":3}}</tool>',
          },
          { content: 'The sum is 5.' },
        ],
      },
      { tools: [add], toolFormat: 'xml', stream, instructions: 'You add numbers.' },
    );
    const result = await agent.send('2+3?');
    expect(result.response).toBe('The sum is 5.');
    expect(result.iterations).toBe(2);
    // The conversation keeps the native shape.
    assertToolCallsAnswered(result.messages);
    expect(result.messages.find((m) => m.role === 'tool')).toMatchObject({ content: '5' });
    expect(events.find((e) => e.type === 'thinking')).toMatchObject({ content: 'I need the sum.' });
    // The server never saw native tools; the tools were described in a system message.
    const [first, second] = server.requests;
    expect(first!.tools).toBeUndefined();
    expect(first!.messages[0]).toMatchObject({ role: 'system', content: 'You add numbers.' });
    expect(String(first!.messages[1]!.content)).toMatch(/<tool_calling>[\s\S]*- add: Adds two numbers/);
    // The result went back as a user message of tool_result blocks, with no native tool messages.
    expect(second!.messages.some((m) => m.role === 'tool' || 'tool_calls' in m)).toBe(false);
    expect(second!.messages.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringMatching(/^<tool_result tool_name="add" id="xml_1_1_0">\n5\n<\/tool_result>$/),
    });
  });

  it('merges consecutive results into one user message', () => {
    const view = toXmlRequestMessages(
      [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: '<tool>…</tool><tool>…</tool>',
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'x', arguments: '{}' } },
            { id: 'b', type: 'function', function: { name: 'y', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'a', content: '1' },
        { role: 'tool', tool_call_id: 'b', content: '2' },
      ],
      'TOOLS',
    );
    expect(view.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'user']);
    expect(view.at(-1)!.content).toBe(
      '<tool_result tool_name="x" id="a">\n1\n</tool_result>\n<tool_result tool_name="y" id="b">\n2\n</tool_result>',
    );
  });
});
