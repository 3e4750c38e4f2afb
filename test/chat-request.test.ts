/**
 * The Chat Completions request body (`buildChatBody`) and the XML protocol's request view and call
 * ids (src/llm/xml-tool-calls.ts), on their own: what the server is sent for each tool format, and
 * that a conversation from the Responses wire is sent without its reasoning items.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { buildChatBody, callsInText } from '../src/llm/chat-request.js';
import type { Message } from '../src/llm/message.js';
import { toXmlRequestMessages, xmlCallsOf, xmlToolInstructions } from '../src/llm/xml-tool-calls.js';
import { echoTool, modelRequest } from './support/llm-fixtures.js';

const echo = echoTool;
const bare: ChatCompletionTool = { type: 'function', function: { name: 'bare' } };
const custom = { type: 'custom', custom: { name: 'grammar' } } as ChatCompletionTool;

describe('buildChatBody', () => {
  it('sends the extra fields, the model and the messages, and no tools field without tools', () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'more' },
    ];
    const body = buildChatBody({ model: 'm', request: { temperature: 0.5 } }, modelRequest({ messages }));
    expect(body).toEqual({ temperature: 0.5, model: 'm', messages });
    // The conversation is sent as it is when there is nothing to take out of it.
    expect(body.messages).toBe(messages);
  });

  it("sends native tools with tool_choice 'auto', or 'none' when tools are disabled", () => {
    const tools = [echo];
    expect(buildChatBody({ model: 'm' }, modelRequest({ tools }))).toMatchObject({
      tools,
      tool_choice: 'auto',
    });
    expect(buildChatBody({ model: 'm' }, modelRequest({ tools, toolsEnabled: false }))).toMatchObject({
      tool_choice: 'none',
    });
  });

  it('describes the tools in a system message in XML mode and sends no tools field', () => {
    const tools = [echo, custom];
    const body = buildChatBody(
      { model: 'm', toolFormat: 'xml' },
      modelRequest({
        tools,
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'hi' },
        ],
      }),
    );
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(body.messages[1]!.content).toBe(xmlToolInstructions([echo as never]));
    // Same tools array, same instructions (made once per array).
    const again = buildChatBody({ model: 'm', toolFormat: 'xml' }, modelRequest({ tools }));
    expect(again.messages[0]!.content).toBe(body.messages[1]!.content);
  });

  it('sends the conversation as it is in XML mode without tools', () => {
    const messages: Message[] = [{ role: 'user', content: 'hi' }];
    expect(buildChatBody({ model: 'm', toolFormat: 'xml' }, modelRequest({ messages })).messages).toBe(
      messages,
    );
    expect(callsInText({ model: 'm', toolFormat: 'xml' }, modelRequest())).toBe(false);
    expect(callsInText({ model: 'm', toolFormat: 'xml' }, modelRequest({ tools: [echo] }))).toBe(true);
    expect(callsInText({ model: 'm' }, modelRequest({ tools: [echo] }))).toBe(false);
  });

  it('leaves the reasoning items of a Responses reply out, and nothing else', () => {
    const item = { type: 'reasoning' as const, id: 'rs', summary: [] };
    const user: Message = { role: 'user', content: 'hi' };
    const plain: Message = { role: 'assistant', content: 'plain' };
    const messages: Message[] = [user, { role: 'assistant', content: 'a', reasoning_items: [item] }, plain];
    const sent = buildChatBody({ model: 'm' }, modelRequest({ messages })).messages;
    expect(sent).toEqual([user, { role: 'assistant', content: 'a' }, plain]);
    expect(sent[0]).toBe(user);
    expect(sent[2]).toBe(plain);
    // The conversation itself keeps them.
    expect(messages[1]).toHaveProperty('reasoning_items');
  });
});

describe('the XML protocol', () => {
  it('lists each tool with its description and schema, an empty schema for none', () => {
    const text = xmlToolInstructions([echo, bare] as never);
    expect(text).toContain(
      `- echo: echoes\n  arguments (JSON Schema): ${JSON.stringify(echo.function.parameters)}`,
    );
    expect(text).toContain('- bare: \n  arguments (JSON Schema): {"type":"object","properties":{}}');
    // One line per tool, in a <tools> section after the <tool_calling> one.
    expect(text.split('\n').filter((line) => line.startsWith('- '))).toEqual(['- echo: echoes', '- bare: ']);
    expect(text).toMatch(/^<tool_calling>\n[\s\S]*\n<\/tool_calling>\n<tools>\n- echo[\s\S]*<\/tools>$/);
  });

  it('teaches the block the parser reads, and the result blocks the view writes', () => {
    const text = xmlToolInstructions([echo] as never);
    // The example block in the instructions is one call, of the placeholder name.
    const example = xmlCallsOf(text.replace(/<tools>[\s\S]*$/, ''), {
      usedCallIds: new Set(),
      callIdStem: 's',
    });
    expect(example.map((c) => c.name)).toEqual(['<name>']);
    const results = toXmlRequestMessages(
      [
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'i', type: 'function', function: { name: 'n', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'i', content: 'r' },
      ],
      text,
    ).at(-1)!.content as string;
    const opening = (block: string) => block.slice(0, block.indexOf('tool_name='));
    expect(text).toContain(`${opening(results)}tool_name="<name>" id="<id>">`);
  });

  it('gives the calls of an answer made ids, checked against the conversation', () => {
    const content = '<tool>{"tool_name":"a"}</tool> text <tool>{"tool_name":"b","arguments":{"x":1}}</tool>';
    expect(xmlCallsOf(content, { usedCallIds: new Set(['s_0']), callIdStem: 's' })).toEqual([
      { id: 's_0_2', name: 'a', argsText: '{}' },
      { id: 's_1', name: 'b', argsText: '{"x":1}' },
    ]);
    expect(xmlCallsOf('no blocks', { usedCallIds: new Set(), callIdStem: 's' })).toEqual([]);
  });

  it('reads a block that is not JSON with no name as a nameless call keeping its text', () => {
    expect(xmlCallsOf('<tool> not json </tool>', { usedCallIds: new Set(), callIdStem: 's' })).toEqual([
      { id: 's_0', name: '', argsText: 'not json' },
    ]);
    expect(xmlCallsOf('<tool>{"tool_name": 5}</tool>', { usedCallIds: new Set(), callIdStem: 's' })).toEqual([
      { id: 's_0', name: '', argsText: '{}' },
    ]);
  });

  it('shows the calls as text and the results as tool_result blocks, names by call id', () => {
    const view = toXmlRequestMessages(
      [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'x', arguments: '{}' } },
            { id: 'g', type: 'custom', custom: { name: 'g', input: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: 'parts' }] },
        { role: 'tool', tool_call_id: 'g', content: 'custom result' },
        { role: 'user', content: 'next' },
        { role: 'tool', tool_call_id: 'lost', content: 'orphan' },
      ],
      'TOOLS',
    );
    expect(view).toEqual([
      { role: 'system', content: 'TOOLS' },
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '' },
      {
        role: 'user',
        content:
          '<tool_result tool_name="x" id="a">\n[{"type":"text","text":"parts"}]\n</tool_result>\n' +
          '<tool_result tool_name="unknown" id="g">\ncustom result\n</tool_result>',
      },
      { role: 'user', content: 'next' },
      { role: 'user', content: '<tool_result tool_name="unknown" id="lost">\norphan\n</tool_result>' },
    ]);
  });

  it('puts the instructions after every leading system message, and keeps an answer as it is', () => {
    const answer: Message = { role: 'assistant', content: 'done' };
    const view = toXmlRequestMessages(
      [
        { role: 'system', content: 'a' },
        { role: 'system', content: 'b' },
        answer,
        { role: 'system', content: 'late' },
      ],
      'TOOLS',
    );
    expect(view.map((m) => m.content)).toEqual(['a', 'b', 'TOOLS', 'done', 'late']);
    expect(view[3]).toBe(answer);
    expect(toXmlRequestMessages([], 'TOOLS')).toEqual([{ role: 'system', content: 'TOOLS' }]);
  });
});
