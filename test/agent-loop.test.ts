import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentEvent, createAgent, defineTool } from '../src/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { WIRES } from './support/harness.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

describe.each(WIRES)('agent loop smoke over %s', (api) => {
  it.each([true, false])('runs a tool then answers (stream=%s)', async (stream) => {
    server = await startScriptedServer({
      scenario: {
        turns: [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { content: 'The sum is 5.' }],
      },
    });
    const agent = createAgent({
      baseURL: server.url,
      apiKey: 'test',
      tools: [add],
      stream,
      api,
      instructions: 'Be brief.',
    });
    const events: AgentEvent[] = [];
    agent.on('*', (e) => events.push(e));
    const result = await agent.send('What is 2+3?');
    expect(result.terminateReason).toBe('completed');
    expect(result.response).toBe('The sum is 5.');
    expect(result.iterations).toBe(2);
    const toolMsg = result.messages.find((m) => m.role === 'tool');
    expect(toolMsg).toMatchObject({ role: 'tool', content: '5' });
    expect(server.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: '5' });
    const states = events.filter((e) => e.type === 'state_change').map((e) => (e as { state: string }).state);
    expect(states).toEqual(['AwaitingInput', 'Thinking', 'ExecutingTool', 'Thinking', 'Completed']);
    if (stream) {
      const text = events
        .filter((e) => e.type === 'content_chunk')
        .map((e) => (e as { delta: string }).delta)
        .join('');
      expect(text).toBe('The sum is 5.');
    }
    agent.stop();
  });
});

describe("a turn's result", () => {
  it("holds the conversation the turn ended with, the caller's own array, the same on every read", async () => {
    server = await startScriptedServer({ scenario: { turns: [{ content: 'one' }, { content: 'two' }] } });
    const agent = createAgent({ baseURL: server.url, apiKey: 'test', stream: false });
    const first = await agent.send('a');
    expect(first.messages).toBe(first.messages);
    expect(first.messages.map((m) => m.content)).toEqual(['a', 'one']);
    first.messages.push({ role: 'user', content: 'mine' });
    const second = await agent.send('b');
    // The next turn neither sees the caller's change nor changes the first result.
    expect(second.messages.map((m) => m.content)).toEqual(['a', 'one', 'b', 'two']);
    expect(first.messages.map((m) => m.content)).toEqual(['a', 'one', 'mine']);
    expect(JSON.parse(JSON.stringify(second)).messages).toHaveLength(4);
    expect({ ...second }.messages).toBe(second.messages);
    agent.stop();
  });
});
