import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../src/index.js';
import type { McpServerConfig } from '../src/mcp/index.js';
import { agentOn } from './support/harness.js';
import { type RemoteServer, startSseServer } from './support/mcp-remote-servers.mjs';

// Servers that still speak the older HTTP+SSE transport: reached with `type: "sse"`, and without a
// type through the fallback the spec describes (Streamable HTTP first; a 4xx on its POST means SSE).

let sse: RemoteServer;
beforeAll(async () => {
  sse = await startSseServer();
});
afterAll(() => sse.stop());

const closing: Agent[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((a) => a.close()));
});

async function echoThrough(server: McpServerConfig) {
  const { agent } = await agentOn(
    {
      turns: [{ toolCalls: [{ name: 'old__echo', arguments: { text: 'over sse' } }] }, { content: 'done' }],
    },
    { mcpServers: { old: server } },
  );
  closing.push(agent);
  const errors: string[] = [];
  agent.on('error', (e) => errors.push(e.message));
  const result = await agent.send('echo');
  return { agent, errors, tool: String(result.messages.find((m) => m.role === 'tool')?.content) };
}

describe('the HTTP+SSE transport', () => {
  it('reaches an SSE-only server with "type": "sse"', async () => {
    const { agent, tool } = await echoThrough({ type: 'sse', url: sse.url });
    expect(tool).toBe('echo: over sse');
    expect(agent.mcpServers).toEqual([
      { name: 'old', state: 'ready', transport: 'sse', tools: ['old__echo', 'old__whoami'] },
    ]);
  });

  it('falls back to SSE when a url without a type answers the Streamable HTTP POST with a 4xx', async () => {
    const { agent, tool, errors } = await echoThrough({ url: sse.url });
    expect(tool).toBe('echo: over sse');
    expect(agent.mcpServers[0]!.transport).toBe('sse');
    expect(errors).toEqual([]);
  });

  it('"type": "http" does not fall back: the 405 is the error', async () => {
    const { agent } = await agentOn(
      { turns: [{ content: 'x' }] },
      { mcpServers: { old: { type: 'http', url: sse.url } } },
    );
    closing.push(agent);
    const errors: string[] = [];
    agent.on('error', (e) => errors.push(e.message));
    await agent.ready().catch(() => {});
    expect(agent.mcpServers[0]!.state).toBe('failed');
    expect(errors).toEqual([
      expect.stringMatching(
        /^MCP server "old" failed to start: Streamable HTTP error: Error POSTing to endpoint: method not allowed$/,
      ),
    ]);
  });
});
