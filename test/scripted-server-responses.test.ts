/**
 * The scripted server's Responses API (`POST /v1/responses`) through the SDK's own
 * `client.responses.create`: the events and JSON it sends, and the requests it refuses as OpenAI does.
 */
import OpenAI, { BadRequestError } from 'openai';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(scenario: Scenario) {
  server = await startScriptedServer({ scenario });
  return new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
}

const tools = [
  { type: 'function' as const, name: 'echo', parameters: { type: 'object', properties: {} }, strict: false },
];
const scenario: Scenario = {
  turns: [
    {
      reasoning: 'Echo it.',
      content: 'Calling.',
      toolCalls: [
        { id: 'c1', name: 'echo', arguments: { text: 'a' } },
        { id: 'c2', name: 'echo', arguments: { text: 'b' } },
      ],
    },
    { content: 'Both echoed.' },
  ],
};

describe('the scripted server on /v1/responses', () => {
  it('streams OpenAI’s events in order, the last one carrying the whole response', async () => {
    const client = await start(scenario);
    const stream = await client.responses.create({
      model: 'm',
      input: 'hi',
      tools,
      stream: true,
      store: false,
    });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.function_call_arguments.done')).toHaveLength(2);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe('Calling.');
    const summary = events.flatMap((e) =>
      e.type === 'response.reasoning_summary_text.delta' ? [e.delta] : [],
    );
    expect(summary.join('')).toBe('Echo it.');
    const last = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(last.response.output.map((item) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
      'function_call',
    ]);
    expect(last.response.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('answers JSON, takes the reasoning item back, and picks the turn by assistant turns', async () => {
    const client = await start(scenario);
    const first = await client.responses.create({ model: 'm', input: 'hi', tools, store: false });
    expect(first.output_text).toBe('Calling.');
    const input: ResponseInputItem[] = [
      { role: 'user', content: 'hi' },
      ...(first.output as ResponseInputItem[]),
      { type: 'function_call_output', call_id: 'c1', output: 'a' },
      { type: 'function_call_output', call_id: 'c2', output: 'b' },
    ];
    const second = await client.responses.create({ model: 'm', input, tools, store: false });
    expect(second.output_text).toBe('Both echoed.');
    // The request is recorded as its Chat Completions view.
    expect(server!.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
  });

  it('refuses, as OpenAI does, a reasoning item without its content when nothing is stored', async () => {
    const client = await start(scenario);
    const first = await client.responses.create({ model: 'm', input: 'hi', tools, store: false });
    const stripped = first.output.map((item) =>
      item.type === 'reasoning' ? { ...item, encrypted_content: undefined } : item,
    ) as ResponseInputItem[];
    const answers: ResponseInputItem[] = [
      { type: 'function_call_output', call_id: 'c1', output: 'a' },
      { type: 'function_call_output', call_id: 'c2', output: 'b' },
    ];
    const sent = client.responses.create({
      model: 'm',
      input: [...stripped, ...answers],
      tools,
      store: false,
    });
    await expect(sent).rejects.toThrow(BadRequestError);
    await expect(sent).rejects.toThrow(/Items are not persisted when `store` is set to false/);
  });

  it('refuses a function call without its output', async () => {
    const client = await start(scenario);
    const first = await client.responses.create({ model: 'm', input: 'hi', tools, store: false });
    const input = [
      ...(first.output as ResponseInputItem[]),
      { type: 'function_call_output', call_id: 'c1', output: 'a' },
    ];
    await expect(
      client.responses.create({ model: 'm', input: input as ResponseInputItem[], tools, store: false }),
    ).rejects.toThrow(/c2/);
  });
});
