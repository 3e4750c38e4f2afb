import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../src/index.js';
import { agentOn, assertToolCallsAnswered, nextEvent } from './support/harness.js';
import { everythingStdio, startEverythingHttp } from './support/mcp-servers.js';

// MCP tools against the reference server installed from the registry (@modelcontextprotocol/server-everything),
// over stdio and over its own Streamable HTTP mode, driven by the real openai SDK through the scripted server.

const closing: Agent[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((a) => a.close()));
});

/** The tool definitions of a request, by name. */
function toolsOf(request: {
  tools?: unknown[];
}): Map<string, { description?: string; parameters?: unknown }> {
  const tools = (request.tools ?? []) as {
    function: { name: string; description?: string; parameters?: unknown };
  }[];
  return new Map(tools.map((t) => [t.function.name, t.function]));
}

describe('MCP tools from server-everything', () => {
  it('offers its tools as everything__<tool> with its schema; a read-only call runs without approval', async () => {
    const { agent, server, events } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'everything__echo', arguments: { message: 'hi there' } },
              { name: 'everything__get-structured-content', arguments: { location: 'Chicago' } },
              { name: 'everything__get-tiny-image', arguments: {} },
            ],
          },
          { content: 'done' },
        ],
      },
      { mcpServers: { everything: everythingStdio() } },
    );
    closing.push(agent);
    await agent.ready();
    expect(agent.mcpServers).toEqual([
      expect.objectContaining({
        name: 'everything',
        state: 'ready',
        tools: expect.arrayContaining(['everything__echo']),
      }),
    ]);
    const result = await agent.send('echo something');
    expect(result.terminateReason).toBe('completed');
    expect(events.some((e) => e.type === 'approval_requested')).toBe(false);
    const offered = toolsOf(server.requests[0]!);
    expect(offered.get('everything__echo')).toEqual({
      name: 'everything__echo',
      description: 'Echoes back the input string',
      parameters: expect.objectContaining({
        type: 'object',
        properties: { message: expect.objectContaining({ type: 'string', description: 'Message to echo' }) },
        required: ['message'],
      }),
    });
    const tools = result.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(tools[0]).toBe('Echo: hi there');
    // Structured content as JSON (the text item already held it: not repeated).
    expect(JSON.parse(tools[1]!)).toEqual(expect.objectContaining({ temperature: expect.any(Number) }));
    expect(tools[2]).toMatch(/\[image: image\/png, \d+ bytes, not shown\]/);
    assertToolCallsAnswered(result.messages);
  });

  it("passes the server's progress notifications on as the call's tool_progress events", async () => {
    const { agent, events } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
            ],
          },
          { content: 'done' },
        ],
      },
      { mcpServers: { everything: everythingStdio() } },
    );
    closing.push(agent);
    const result = await agent.send('run it');
    expect(result.terminateReason).toBe('completed');
    const start = events.find((e) => e.type === 'tool_call_start')!;
    const progress = events.filter((e) => e.type === 'tool_progress');
    // The server sends its last notification just before the result; the MCP SDK handles notifications a
    // microtask late and drops one whose call has its result already: steps 1 and 2 always arrive.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.slice(0, 2).map((e) => ({ ...e, timestamp: 0 }))).toEqual(
      [1, 2].map((step) => ({
        type: 'tool_progress',
        sessionId: agent.sessionId,
        turn: 1,
        iteration: 1,
        timestamp: 0,
        toolCallId: (start as { toolCallId: string }).toolCallId,
        name: 'everything__trigger-long-running-operation',
        progress: step,
        total: 3,
      })),
    );
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf('tool_progress')).toBeLessThan(types.indexOf('tool_call_end'));
    expect(String(result.messages.filter((m) => m.role === 'tool').at(-1)?.content)).toMatch(
      /Long running operation completed/,
    );
  });

  it('asks before a tool that is not read-only, and before every call with approval: always', async () => {
    const { agent, events } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'everything__echo', arguments: { message: 'a' } },
              { name: 'tools__toggle-simulated-logging', arguments: {} },
            ],
          },
          { content: 'done' },
        ],
      },
      {
        mcpServers: {
          everything: everythingStdio({ approval: 'always' }),
          tools: everythingStdio(),
        },
      },
    );
    closing.push(agent);
    await agent.ready();
    const asked = nextEvent(agent, 'approval_requested');
    const turn = agent.send('go');
    const { pending } = await asked;
    expect(pending.map((p) => p.name)).toEqual(['everything__echo', 'tools__toggle-simulated-logging']);
    agent.approve(pending[0]!.toolCallId);
    agent.reject(pending[1]!.toolCallId, 'not now');
    const result = await turn;
    const tools = result.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(tools[0]).toBe('Echo: a');
    expect(tools[1]).toMatch(/declined.*not now/);
    expect(events.filter((e) => e.type === 'approval_resolved')).toHaveLength(2);
  });

  it('the session policy wins over the server: approval never runs a non-read-only tool unasked', async () => {
    const { agent, events } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'everything__toggle-simulated-logging', arguments: {} }] },
          { content: 'ok' },
        ],
      },
      { approval: 'never', mcpServers: { everything: everythingStdio() } },
    );
    closing.push(agent);
    const result = await agent.send('toggle');
    expect(events.some((e) => e.type === 'approval_requested')).toBe(false);
    expect(String(result.messages.find((m) => m.role === 'tool')?.content)).toMatch(/logging/i);
  });

  it("arguments that break the server's schema get an error result naming the call", async () => {
    const { agent } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'everything__echo', arguments: { msg: 'wrong key' } }] },
          { toolCalls: [{ name: 'everything__get-structured-content', arguments: { location: 'Paris' } }] },
          { content: 'ok' },
        ],
      },
      { mcpServers: { everything: everythingStdio() } },
    );
    closing.push(agent);
    const result = await agent.send('go');
    const tools = result.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(tools[0]).toMatch(
      /^Error: invalid arguments for "everything__echo": .*must have required property 'message'/,
    );
    expect(tools[1]).toMatch(
      /^Error: invalid arguments for "everything__get-structured-content": .*allowed values/,
    );
  });

  it('works over Streamable HTTP (server-everything on 127.0.0.1, an OS-chosen port)', async () => {
    const http = await startEverythingHttp();
    try {
      const { agent, server } = await agentOn(
        {
          turns: [
            { toolCalls: [{ name: 'remote__echo', arguments: { message: 'over http' } }] },
            { content: 'done' },
          ],
        },
        { mcpServers: { remote: { url: http.url } } },
      );
      const result = await agent.send('echo');
      expect(String(result.messages.find((m) => m.role === 'tool')?.content)).toBe('Echo: over http');
      expect(toolsOf(server.requests[0]!).has('remote__get-sum')).toBe(true);
      await agent.close();
    } finally {
      await http.stop();
    }
  });
});
