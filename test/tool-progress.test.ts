/**
 * `ctx.progress` and the `tool_progress` bus event, through the real agent (the SDK over HTTP to the
 * scripted server): what a listener gets, redaction, progress only while the call runs, bad reports,
 * and that progress stays out of the conversation and the transcript.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentEvent, defineTool, MemorySessionStore, type ToolContext } from '../src/index.js';
import { agentAt, agentOn, serve } from './support/harness.js';

/** A tool that reports three times, once with a secret, and keeps its ctx for a report after it ended. */
function reportingTool(kept: { ctx?: ToolContext }) {
  return defineTool({
    name: 'fetch_pages',
    description: 'fetches pages',
    parameters: z.object({ pages: z.number() }),
    execute: async ({ pages }, ctx) => {
      kept.ctx = ctx;
      for (let page = 1; page <= pages; page++) {
        ctx.progress({ message: `page ${page}`, progress: page, total: pages });
        await new Promise((r) => setImmediate(r));
      }
      ctx.progress({ message: 'token hunter2', data: { cached: true } });
      return `fetched ${pages}`;
    },
  });
}

const scenario = {
  turns: [{ toolCalls: [{ name: 'fetch_pages', arguments: { pages: 2 } }] }, { content: 'done' }],
};

describe('tool_progress', () => {
  it('a listener hears each report with the call, in order, between the call start and end, redacted', async () => {
    const kept: { ctx?: ToolContext } = {};
    const store = new MemorySessionStore();
    const { agent, events } = await agentOn(scenario, {
      tools: [reportingTool(kept)],
      secrets: ['hunter2'],
      store,
      session: 'p1',
    });
    const result = await agent.send('go');
    expect(result.response).toBe('done');
    const progress = events.filter((e): e is AgentEvent<'tool_progress'> => e.type === 'tool_progress');
    const callId = progress[0]!.toolCallId;
    expect(progress.map(({ timestamp: _t, ...rest }) => rest)).toEqual([
      {
        type: 'tool_progress',
        sessionId: 'p1',
        turn: 1,
        iteration: 1,
        toolCallId: callId,
        name: 'fetch_pages',
        message: 'page 1',
        progress: 1,
        total: 2,
      },
      expect.objectContaining({ message: 'page 2', progress: 2, total: 2 }),
      expect.objectContaining({ message: expect.not.stringContaining('hunter2'), data: { cached: true } }),
    ]);
    const types = events.map((e) => e.type);
    expect(types.indexOf('tool_call_start')).toBeLessThan(types.indexOf('tool_progress'));
    expect(types.lastIndexOf('tool_progress')).toBeLessThan(types.indexOf('tool_call_end'));

    // After the call ended its reports are dropped.
    const before = events.length;
    kept.ctx!.progress({ message: 'late' });
    await new Promise((r) => setTimeout(r, 20));
    expect(events.slice(before).filter((e) => e.type === 'tool_progress')).toEqual([]);

    // Live feedback only: neither the conversation nor the transcript keeps it.
    await agent.flush();
    expect(JSON.stringify(agent.messages)).not.toContain('page 1');
    expect(JSON.stringify((await store.readTranscript('p1')).entries)).not.toContain('page 1');
  });

  it('a report of the wrong shape fails the call with an error naming the tool and the field', async () => {
    const bad = defineTool({
      name: 'bad_reporter',
      description: 'reports badly',
      parameters: z.object({}),
      execute: (_args, ctx) => {
        ctx.progress({ progress: Number.NaN });
        return 'not reached';
      },
    });
    const { agent, events } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'bad_reporter', arguments: {} }] }, { content: 'ok' }] },
      { tools: [bad] },
    );
    await agent.send('go');
    const end = events.find((e): e is AgentEvent<'tool_call_end'> => e.type === 'tool_call_end');
    expect(end?.error).toMatch(/ctx\.progress \(tool "bad_reporter"\): progress must be a finite number/);
    expect(events.some((e) => e.type === 'tool_progress')).toBe(false);
  });

  it('a listener added while the tool runs hears the reports made after it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    const tool = defineTool({
      name: 'waits',
      description: 'waits',
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        ctx.progress({ message: 'unheard' });
        started();
        await gate;
        ctx.progress({ message: 'heard' });
        return 'ok';
      },
    });
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'waits', arguments: {} }] }, { content: 'ok' }],
    });
    const agent = agentAt(server, { tools: [tool] });
    const heard: string[] = [];
    const turn = agent.send('go');
    await running;
    agent.on('tool_progress', (e) => heard.push(e.message ?? ''));
    release();
    await turn;
    expect(heard).toEqual(['heard']);
  });
});
