import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/index.js';
import { type ListeningServer, listenOn } from '../src/server/listen-on.js';
import { createMcpHttpHandler, type McpHttpServerOptions } from '../src/server/mcp/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { repoRoot } from './support/build-dist.js';
import { askWith, noteWriter, outputOf, routedModel, textOf } from './support/mcp-agent-server.js';
import { scriptChildren } from './support/script-child.js';
import { waitUntil } from './support/wait-until.js';

/**
 * The MCP server's remaining cases through the MCP SDK's own client over Streamable HTTP: a session
 * whose lease another process holds, two agents as two tools, an approval question declined and one
 * cancelled (dismissed), and MCP sessions that expire when idle or past the cap.
 */
const open: {
  listening: ListeningServer[];
  closers: (() => Promise<void>)[];
  clients: Client[];
  dirs: string[];
} = {
  listening: [],
  closers: [],
  clients: [],
  dirs: [],
};
const models: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(open.clients.splice(0).map((c) => c.close().catch(() => {})));
  await Promise.all(open.closers.splice(0).map((close) => close()));
  await Promise.all(models.splice(0).map((m) => m.close()));
  await Promise.all(open.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);

// Another process that opens a session on the same file store and holds its lease until killed.
const holder = scriptChildren(
  'mcp-lease-',
  `
import { createAgent, FileSessionStore } from ${dist('index.js')};
const config = JSON.parse(process.argv[3]);
const agent = createAgent({
  instructions: 'You help.',
  store: new FileSessionStore({ dir: config.dir }),
  session: config.session,
  baseURL: config.model,
  apiKey: 'test-key',
});
await agent.ready();
console.log(JSON.stringify({ holding: config.session }));
setInterval(() => {}, 1000);
`,
);

let written: string[] = [];

/** A scripted model, a file store in a temp folder and an MCP HTTP server on 127.0.0.1. */
async function serve(options: Partial<McpHttpServerOptions> = {}) {
  const model = await startScriptedServer({ respond: routedModel('write_note', { text: 'remember MCP' }) });
  models.push(model);
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-cases-'));
  open.dirs.push(dir);
  written = [];
  const writeNote = noteWriter((text) => written.push(text));
  const handler = createMcpHttpHandler({
    name: 'helper',
    agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [writeNote] }),
    store: new FileSessionStore({ dir }),
    runtime: { baseURL: model.url, apiKey: 'test-key' },
    ...options,
  });
  const listening = await listenOn(handler, { host: '127.0.0.1', port: 0 });
  open.closers.push(() => listening.close(() => handler.close()));
  return { url: `${listening.url}/mcp`, handler, model, dir };
}

async function connect(url: string, elicit?: () => ElicitResult) {
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, () => elicit());
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  open.clients.push(client);
  return { client, transport };
}

const ask = askWith;

describe('agentloop as an MCP server: the remaining cases', () => {
  it('refuses a session whose lease another process holds, naming it, and runs nothing', async () => {
    const { url, model, dir } = await serve();
    const { client } = await connect(url);
    const first = await ask(client, 'ask_helper', { message: 'hello' });
    const session = outputOf(first).session;
    const asked = model.requests.length;
    const other = holder.run('hold', { dir, session, model: model.url }, (line) => line.holding === session);
    await other.reached;
    const refused = await ask(client, 'ask_helper', { message: 'hello again', session });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      `ask_helper: session "${session}" is being run by another process; try again when its turn ends`,
    );
    expect(model.requests).toHaveLength(asked);
    other.child.kill('SIGKILL');
    await other.exited;
    // It starts a node process that imports dist/: 30 s and more on a loaded machine.
  }, 120_000);

  it('serves two agents as two tools, each running its own agent', async () => {
    const { url, model } = await serve({
      name: undefined,
      agent: undefined,
      agents: {
        first: () => ({ instructions: 'You are the first agent.', loopControlTools: false }),
        second: () => ({ instructions: 'You are the second agent.', loopControlTools: false }),
      },
    });
    const { client } = await connect(url);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['ask_first', 'ask_second']);
    const a = await ask(client, 'ask_first', { message: 'one' });
    const b = await ask(client, 'ask_second', { message: 'two' });
    expect(textOf(a)).toContain('echo: one');
    expect(textOf(b)).toContain('echo: two');
    expect(outputOf(a).session).not.toBe(outputOf(b).session);
    const system = (i: number) => String(model.requests[i]!.messages[0]!.content);
    expect(system(0)).toContain('You are the first agent.');
    expect(system(1)).toContain('You are the second agent.');
    // A session goes on with the agent whose tool is called.
    await ask(client, 'ask_second', { message: 'three', session: outputOf(b).session });
    expect(system(2)).toContain('You are the second agent.');
  });

  it('an approval question declined, and one cancelled, refuse the call; the turn goes on to an answer', async () => {
    const { url, model } = await serve();
    for (const [action, said] of [
      ['decline', 'declined in the MCP client'],
      ['cancel', 'the approval was dismissed in the MCP client'],
    ] as const) {
      const { client } = await connect(url, () => ({ action }));
      const result = await ask(client, 'ask_helper', { message: 'take a note' });
      expect(result.isError).toBeFalsy();
      expect(written).toEqual([]);
      expect(outputOf(result)).toMatchObject({
        state: 'Completed',
        terminateReason: 'completed',
        toolCalls: [{ name: 'write_note', status: 'declined' }],
      });
      const toolMessage = model.requests.at(-1)!.messages.find((m) => m.role === 'tool');
      expect(String(toolMessage?.content)).toContain(said);
      expect(textOf(result)).toContain('done: ');
    }
  });

  it('closes an MCP session idle past sessionIdleMs: its id then gets 404 with the MCP error', async () => {
    // Long enough that a loaded machine's gap between initialize and the first call does not close it.
    const { url, handler } = await serve({ sessionIdleMs: 1000 });
    const { client, transport } = await connect(url);
    await ask(client, 'ask_helper', { message: 'hello' });
    const id = transport.sessionId!;
    await waitUntil(() => handler.openSessions === 0);
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({
      error: { code: -32001, message: `no MCP session "${id}": initialize again` },
    });
    // A new client initializes again and is served.
    const again = await connect(url);
    expect(textOf(await ask(again.client, 'ask_helper', { message: 'back' }))).toContain('echo: back');
  });

  it('keeps at most maxSessions open: a new one closes the session idle the longest', async () => {
    const { url, handler } = await serve({ maxSessions: 2 });
    const one = await connect(url);
    const two = await connect(url);
    await ask(two.client, 'ask_helper', { message: 'recent' });
    expect(handler.openSessions).toBe(2);
    const three = await connect(url);
    expect(handler.openSessions).toBe(2);
    await expect(one.client.listTools()).rejects.toThrow(/404|initialize again/);
    expect((await two.client.listTools()).tools).toHaveLength(1);
    expect((await three.client.listTools()).tools).toHaveLength(1);
  });
});
