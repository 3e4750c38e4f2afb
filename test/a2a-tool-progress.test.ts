import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { a2aAgentTool } from '../src/server/a2a/index.js';
import { a2aServer, drain, kindOf, sdkClient, textMessage, type Version } from './support/a2a-server.js';
import { agentOn } from './support/harness.js';

// An inner tool's progress (`ctx.progress`, docs/tool-progress.md) reaches the task's streaming
// callers as `working` status updates carrying a data part, and is never kept.

/** What the tool `crawl` reports, in order, before its result. */
const reports = [
  { message: 'page one', progress: 1, total: 2 },
  { progress: 2, total: 2, data: { page: 'two' } },
];
const crawl = defineTool({
  name: 'crawl',
  description: 'crawls',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    for (const report of reports) ctx.progress(report);
    return 'crawled 2 pages';
  },
});

const scenario = {
  turns: [{ toolCalls: [{ name: 'crawl', arguments: {} }] }, { content: 'Crawled.' }],
};
const options = { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [crawl] }) };

/** The data parts of a status update's message. */
const dataOf = (event: StreamResponse) =>
  event.payload?.$case === 'statusUpdate'
    ? (event.payload.value.status?.message?.parts ?? []).flatMap((p) =>
        p.content?.$case === 'data' ? [p.content.value as Record<string, unknown>] : [],
      )
    : [];
const textOf = (event: StreamResponse) =>
  event.payload?.$case === 'statusUpdate'
    ? (event.payload.value.status?.message?.parts ?? []).flatMap((p) =>
        p.content?.$case === 'text' ? [p.content.value as string] : [],
      )
    : [];

describe.each(['1.0', '0.3'] as Version[])('tool progress over A2A %s', (version) => {
  it('a stream gets each report as a working status update with a data part; the transcript keeps none', async () => {
    const { url, store } = await a2aServer(scenario, options);
    const client = await sdkClient(url, version);
    const events = await drain(client.sendMessageStream(textMessage('crawl it')));
    const progress = events.filter((e) => dataOf(e).some((d) => d.type === 'tool_progress'));
    expect(progress.map(kindOf)).toEqual([
      `status:${TaskState.TASK_STATE_WORKING}`,
      `status:${TaskState.TASK_STATE_WORKING}`,
    ]);
    expect(progress.map(dataOf)).toEqual([
      [
        {
          type: 'tool_progress',
          toolCallId: 'call_0_0',
          toolName: 'crawl',
          message: 'page one',
          progress: 1,
          total: 2,
        },
      ],
      [
        {
          type: 'tool_progress',
          toolCallId: 'call_0_0',
          toolName: 'crawl',
          progress: 2,
          total: 2,
          data: { page: 'two' },
        },
      ],
    ]);
    expect(progress.map(textOf)).toEqual([['crawl: page one (1/2)'], ['crawl: 2/2']]);
    // The stream goes on to the turn's end.
    expect(kindOf(events.at(-1)!)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}`);
    const first = events[0]?.payload;
    const contextId = first?.$case === 'task' ? first.value.contextId : '';
    const { entries } = await store.readTranscript(contextId);
    expect(JSON.stringify(entries)).not.toContain('tool_progress');
    expect(JSON.stringify(entries)).not.toContain('page one');
  });
});

describe('a2aAgentTool', () => {
  it("passes the remote agent's tool progress on as its own call's progress", async () => {
    const { url } = await a2aServer(scenario, {
      ...options,
      card: { name: 'crawler', description: 'crawls' },
    });
    const ask = await a2aAgentTool({ url });
    const { agent, events } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'ask_crawler', arguments: { message: 'crawl it' } }] },
          { content: 'ok' },
        ],
      },
      { tools: [ask], loopControlTools: false },
    );
    await agent.send('crawl via the crawler');
    const said = events.flatMap((e) => (e.type === 'tool_progress' ? [e.message] : []));
    expect(said).toEqual(expect.arrayContaining(['crawler: crawl: page one (1/2)', 'crawler: crawl: 2/2']));
  });
});
