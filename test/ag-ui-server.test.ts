import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import {
  agUiServer,
  clientWith,
  expectGolden,
  runThrough,
  shape,
  userMessage,
} from './support/ag-ui-server.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'looks a word up',
  parameters: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: found`,
});

describe('AG-UI run endpoint', () => {
  it('streams a text turn as the golden sequence, and the thread keeps it', async () => {
    const { runs, store } = await agUiServer({ turns: [{ content: 'Hello there, friend.' }] });
    const client = clientWith(runs, 'thread-text', 'hi');
    const { events, error } = await runThrough(client);
    expect(error).toBeUndefined();
    expectGolden('text-turn', shape(events));
    expect(client.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello there, friend.'],
    ]);
    const record = await store.load('thread-text');
    expect(record?.state).toBe('Completed');
    expect(record?.meta).toMatchObject({ principal: 'local' });
  });

  it('runs two parallel tools and streams their calls and results in order', async () => {
    const { runs } = await agUiServer(
      {
        turns: [
          {
            toolCalls: [
              { name: 'lookup', arguments: { word: 'a' } },
              { name: 'lookup', arguments: { word: 'b' } },
            ],
          },
          { content: 'both found' },
        ],
      },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [lookup] }) },
    );
    const client = clientWith(runs, 'thread-tools', 'look up a and b');
    const { events, error } = await runThrough(client);
    expect(error).toBeUndefined();
    expectGolden('two-parallel-tools', shape(events));
    expect(client.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
  });

  it("shows a running tool's progress as an ACTIVITY_SNAPSHOT the client keeps as an activity message", async () => {
    const pages = defineTool({
      name: 'fetch_pages',
      description: 'fetches pages',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        ctx.progress({ message: 'page 1', progress: 1, total: 2 });
        await new Promise((r) => setImmediate(r));
        ctx.progress({ message: 'page 2', progress: 2, total: 2, data: { cached: false } });
        return 'two pages';
      },
    });
    const { runs } = await agUiServer(
      { turns: [{ toolCalls: [{ name: 'fetch_pages', arguments: {} }] }, { content: 'fetched' }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [pages] }) },
    );
    const client = clientWith(runs, 'thread-progress', 'fetch them');
    const { events, error } = await runThrough(client);
    expect(error).toBeUndefined();
    const activities = events.filter((e) => e.type === 'ACTIVITY_SNAPSHOT');
    const callId = (events.find((e) => e.type === 'TOOL_CALL_START') as { toolCallId: string }).toolCallId;
    expect(activities).toEqual([
      expect.objectContaining({
        messageId: `progress-${callId}`,
        activityType: 'tool_progress',
        content: { toolCallId: callId, toolName: 'fetch_pages', message: 'page 1', progress: 1, total: 2 },
      }),
      expect.objectContaining({
        messageId: `progress-${callId}`,
        content: expect.objectContaining({ message: 'page 2', progress: 2, data: { cached: false } }),
      }),
    ]);
    const types = events.map((e) => e.type);
    expect(types.indexOf('ACTIVITY_SNAPSHOT')).toBeGreaterThan(types.indexOf('TOOL_CALL_START'));
    // The client's own state: one activity message for the call, as its last report left it.
    const activity = client.messages.filter((m) => (m.role as string) === 'activity');
    expect(activity).toEqual([
      expect.objectContaining({
        id: `progress-${callId}`,
        activityType: 'tool_progress',
        content: expect.objectContaining({ message: 'page 2' }),
      }),
    ]);
  });

  it('sends the whole history on the next run and appends only the new user message', async () => {
    const { runs, model } = await agUiServer({
      turns: [{ content: 'first answer' }, { content: 'second answer' }],
    });
    const client = clientWith(runs, 'thread-two', 'one');
    expect((await runThrough(client)).error).toBeUndefined();
    client.addMessage(userMessage('two'));
    const { events, error } = await runThrough(client);
    expect(error).toBeUndefined();
    expect(events.at(-1), JSON.stringify(events.at(-1))).toMatchObject({
      type: 'RUN_FINISHED',
      result: 'second answer',
    });
    const sent = model.requests[1]!.messages.filter((m) => m.role !== 'system').map((m) => [
      m.role,
      m.content,
    ]);
    expect(sent).toEqual([
      ['user', 'one'],
      ['assistant', 'first answer'],
      ['user', 'two'],
    ]);
  });

  it('ends a turn stopped by its token budget with RUN_ERROR code token_budget', async () => {
    const { runs } = await agUiServer(
      {
        turns: [
          {
            toolCalls: [{ name: 'lookup', arguments: { word: 'a' } }],
            usage: { prompt_tokens: 900, completion_tokens: 200 },
          },
          { content: 'never' },
        ],
      },
      {
        agent: () => ({
          instructions: 'You help.',
          loopControlTools: false,
          tools: [lookup],
          limits: { tokenBudget: 1000 },
        }),
      },
    );
    const { events, error } = await runThrough(clientWith(runs, 'thread-budget', 'go'));
    expect(error).toBeUndefined(); // a RUN_ERROR is a valid end of a run
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'token_budget' });
  });
});
