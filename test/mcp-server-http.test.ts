import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineAgent, defineTool, FileSessionStore } from '../src/index.js';
import { decisionOf } from '../src/server/mcp/approval-elicitation.js';
import {
  createMcpServer,
  type McpHttpServerOptions,
  type StartedMcpHttpServer,
  startMcpHttpServer,
} from '../src/server/mcp/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import {
  askWith,
  connectInMemory,
  noteWriter,
  outputOf,
  routedModel,
  textOf,
} from './support/mcp-agent-server.js';
import { waitUntil } from './support/wait-until.js';

const open: { servers: StartedMcpHttpServer[]; models: ScriptedServer[]; clients: Client[]; dirs: string[] } =
  {
    servers: [],
    models: [],
    clients: [],
    dirs: [],
  };
afterEach(async () => {
  await Promise.all(open.clients.splice(0).map((c) => c.close().catch(() => {})));
  await Promise.all(open.servers.splice(0).map((s) => s.close()));
  await Promise.all(open.models.splice(0).map((s) => s.close()));
  await Promise.all(open.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

/** The calls `write_note` actually ran with. */
let written: string[] = [];

function helperTools() {
  written = [];
  const lookup = defineTool({
    name: 'lookup',
    description: 'looks a word up',
    parameters: z.object({ word: z.string() }),
    execute: ({ word }, ctx) => {
      ctx.progress({ message: 'searching the index', progress: 1, total: 2 });
      return `${word}: found`;
    },
  });
  const writeNote = noteWriter((text) => written.push(text));
  return [lookup, writeNote];
}

/** A scripted model, a file store and an MCP server on 127.0.0.1 serving `helper`. */
async function mcpServer(options: Partial<McpHttpServerOptions> = {}) {
  const model = await startScriptedServer({ respond: routedModel('write_note', { text: 'remember MCP' }) });
  open.models.push(model);
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-serve-'));
  open.dirs.push(dir);
  const store = new FileSessionStore({ dir });
  const tools = helperTools();
  const server = await startMcpHttpServer({
    name: 'helper',
    agent: () => ({ instructions: 'You help.', loopControlTools: false, tools }),
    store,
    runtime: { baseURL: model.url, apiKey: 'test-key' },
    ...options,
  });
  open.servers.push(server);
  return { server, model, store };
}

/** The MCP SDK's own client over Streamable HTTP; `elicit` answers approval questions when given. */
async function connect(
  url: string,
  options: { elicit?: (message: string) => ElicitResult; headers?: Record<string, string> } = {},
) {
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  const asked: { message: string; meta: unknown }[] = [];
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push({ message: request.params.message, meta: request.params._meta });
      return answer(request.params.message);
    });
  }
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    options.headers ? { requestInit: { headers: options.headers } } : {},
  );
  await client.connect(transport);
  open.clients.push(client);
  return { client, asked };
}

const ask = (client: Client, args: Record<string, unknown>, options?: Parameters<typeof askWith>[3]) =>
  askWith(client, 'ask_helper', args, options);

describe('agentloop as an MCP server over Streamable HTTP', () => {
  it('lists one ask_<agent> tool per agent, with an input and an output schema', async () => {
    const { server } = await mcpServer({
      agent: undefined,
      agents: { helper: () => ({ instructions: 'You help.' }), 'second one': () => ({ instructions: 'x' }) },
    });
    const { client } = await connect(server.url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask_helper', 'ask_second_one']);
    const tool = tools.find((t) => t.name === 'ask_helper')!;
    expect(tool.inputSchema.required).toEqual(['message']);
    expect(Object.keys(tool.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining(['session', 'state', 'response', 'toolCalls', 'usage']),
    );
  });

  it('answers as text and structured content, and continues the session it names', async () => {
    const { server, model, store } = await mcpServer();
    const { client } = await connect(server.url);
    const first = await ask(client, { message: 'hello there' });
    expect(first.isError).toBeUndefined();
    expect(textOf(first)).toContain('echo: hello there');
    const output = outputOf(first);
    expect(output).toMatchObject({
      state: 'Completed',
      success: true,
      terminateReason: 'completed',
      response: 'echo: hello there',
      iterations: 1,
      toolCalls: [],
    });
    expect(output.usage.totalTokens).toBeGreaterThan(0);
    expect(textOf(first)).toContain(`session: ${output.session}`);
    expect((await store.load(output.session))?.meta).toMatchObject({ principal: 'local' });

    const second = await ask(client, { message: 'and again', session: output.session });
    expect(outputOf(second)).toMatchObject({ session: output.session, response: 'echo: and again' });
    const sent = model.requests.at(-1)!.messages.filter((m) => m.role !== 'system');
    expect(sent.map((m) => m.content)).toEqual(['hello there', 'echo: hello there', 'and again']);
  });

  it('sends progress while the turn runs, and reports its tool calls', async () => {
    const { server } = await mcpServer();
    const { client } = await connect(server.url);
    const progress: Progress[] = [];
    const result = await ask(client, { message: 'look it up' }, { onprogress: (p) => progress.push(p) });
    expect(textOf(result)).toContain('done: mcp: found');
    expect(progress.map((p) => p.message)).toEqual([
      'thinking (model call 1)',
      'running lookup',
      // the inner tool's own progress (`ctx.progress`), passed on
      'lookup: searching the index (1/2)',
      'lookup done',
      'thinking (model call 2)',
    ]);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5]);
    expect(outputOf(result).toolCalls).toEqual([
      { id: expect.any(String), name: 'lookup', args: { word: 'mcp' }, status: 'ok', result: 'mcp: found' },
    ]);
  });

  it("interrupts the turn on the client's cancel; the session rests Interrupted and goes on", async () => {
    const { server, model, store } = await mcpServer();
    const { client } = await connect(server.url);
    const first = outputOf(await ask(client, { message: 'hello' }));
    const cancel = new AbortController();
    const call = ask(client, { message: 'please hang', session: first.session }, { signal: cancel.signal });
    await waitUntil(() => model.requestCount === 2);
    cancel.abort('enough');
    await expect(call).rejects.toThrow();
    await waitUntil(async () => (await store.load(first.session))?.state === 'Interrupted');
    const next = await ask(client, { message: 'still there?', session: first.session });
    expect(textOf(next)).toContain('echo: still there?');
    expect(outputOf(next)).toMatchObject({ state: 'Completed', response: 'echo: still there?' });
    const sent = model.requests.at(-1)!.messages.filter((m) => m.role !== 'system');
    expect(sent.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'echo: hello'],
      ['user', 'please hang'],
      ['user', 'still there?'],
    ]);
  });

  it('asks for approval as an elicitation; approve runs the call', async () => {
    const { server } = await mcpServer();
    const { client, asked } = await connect(server.url, {
      elicit: () => ({ action: 'accept', content: { decision: 'approve' } }),
    });
    const result = await ask(client, { message: 'take a note' });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toContain('"write_note"');
    expect(asked[0]!.message).toContain('remember MCP');
    expect(asked[0]!.meta).toMatchObject({
      'agentloop/toolCall': { name: 'write_note', args: { text: 'remember MCP' } },
    });
    expect(written).toEqual(['remember MCP']);
    expect(textOf(result)).toContain('done: wrote remember MCP');
    expect(outputOf(result).toolCalls).toMatchObject([{ name: 'write_note', status: 'ok' }]);
  });

  it('an elicitation answered reject (with a reason) does not run the call; the model is told why', async () => {
    const { server, model } = await mcpServer();
    const { client } = await connect(server.url, {
      elicit: () => ({ action: 'accept', content: { decision: 'reject', reason: 'not today' } }),
    });
    const result = await ask(client, { message: 'take a note' });
    expect(written).toEqual([]);
    expect(outputOf(result)).toMatchObject({ state: 'Completed', toolCalls: [{ status: 'declined' }] });
    const toolMessage = model.requests.at(-1)!.messages.find((m) => m.role === 'tool');
    expect(String(toolMessage?.content)).toContain('not today');
  });

  it('refuses a call needing approval when the client has no elicitation, naming the tool and the way to allow it', async () => {
    const { server, store } = await mcpServer();
    const { client } = await connect(server.url);
    const result = await ask(client, { message: 'take a note' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('"write_note" needs approval');
    expect(textOf(result)).toContain('--allow write_note');
    expect(textOf(result)).toContain('--yes');
    expect(written).toEqual([]);
    const output = outputOf(result);
    expect(output).toMatchObject({
      state: 'Interrupted',
      toolCalls: [{ name: 'write_note', status: 'not_run' }],
    });
    expect((await store.load(output.session))?.state).toBe('Interrupted');
  });

  it('a session left waiting for approval (its process gone) is interrupted, the call unrun, and goes on', async () => {
    const { server, model, store } = await mcpServer();
    const left = createAgent({
      instructions: 'You help.',
      loopControlTools: false,
      tools: helperTools(),
      baseURL: model.url,
      apiKey: 'test-key',
      store,
      session: 'left-waiting',
    });
    const asked = new Promise<void>((resolve) => left.on('approval_requested', () => resolve()));
    void left.send('take a note');
    await asked;
    await left.close();
    expect((await store.load('left-waiting'))?.state).toBe('WaitingApproval');
    const { client } = await connect(server.url);
    const result = await ask(client, { message: 'hello again', session: 'left-waiting' });
    expect(outputOf(result)).toMatchObject({ state: 'Completed', response: 'echo: hello again' });
    expect(written).toEqual([]);
  });

  it('a cancel while the approval question is open cancels the question and interrupts the turn, the call unrun', async () => {
    const { server, store } = await mcpServer();
    const client = new Client(
      { name: 'slow-approver', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    let asked = false;
    client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
      asked = true;
      return new Promise<ElicitResult>((resolve) => {
        extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' }));
      });
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    open.clients.push(client);
    const first = outputOf(await ask(client, { message: 'hello' }));
    const cancel = new AbortController();
    const call = ask(client, { message: 'take a note', session: first.session }, { signal: cancel.signal });
    await waitUntil(() => asked);
    cancel.abort('never mind');
    await expect(call).rejects.toThrow();
    await waitUntil(async () => (await store.load(first.session))?.state === 'Interrupted');
    expect(written).toEqual([]);
  });

  it('an approval question without an answer in approvalTimeoutMs interrupts the turn, naming the tool', async () => {
    const { server } = await mcpServer({ approvalTimeoutMs: 50 });
    const client = new Client(
      { name: 'silent', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(
      ElicitRequestSchema,
      (_request, extra) =>
        new Promise<ElicitResult>((resolve) =>
          extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' })),
        ),
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    open.clients.push(client);
    const result = await ask(client, { message: 'take a note' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(
      'the approval of the tool "write_note" got no answer from the MCP client',
    );
    expect(outputOf(result)).toMatchObject({ state: 'Interrupted', toolCalls: [{ status: 'not_run' }] });
    expect(written).toEqual([]);
  });

  it('runs a call of an allowed tool without asking', async () => {
    const { server } = await mcpServer({ allow: ['write_note'] });
    const { client } = await connect(server.url);
    const result = await ask(client, { message: 'take a note' });
    expect(result.isError).toBeUndefined();
    expect(written).toEqual(['remember MCP']);
  });

  it('refuses bad arguments, unknown and malformed sessions and long messages with clear tool errors', async () => {
    const { server, model } = await mcpServer({ maxMessageChars: 1000 });
    const { client } = await connect(server.url);
    // Checked by createMcpServer itself (McpServer's schema checks do not run on ask_ calls).
    const missing = await ask(client, { session: 'x' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe('ask_helper: `message` is missing: send the text for the agent as a string');
    const wrongType = await ask(client, { message: 42 });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toBe(
      'ask_helper: `message` must be a string (the text for the agent), not a number',
    );
    expect(textOf(await ask(client, { message: 'hi', session: ['s'] }))).toBe(
      'ask_helper: `session` must be a string (the session id from an earlier answer), not an array; leave it out to start a new conversation',
    );
    const unknown = await ask(client, { message: 'hi', session: 'no-such-session' });
    expect(textOf(unknown)).toBe(
      'ask_helper: no session "no-such-session" in the store; leave `session` out to start a new conversation',
    );
    const malformed = await ask(client, { message: 'hi', session: '../../etc' });
    expect(textOf(malformed)).toContain('cannot be a session id');
    const long = await ask(client, { message: 'x'.repeat(1001) });
    expect(textOf(long)).toBe('ask_helper: `message` has 1001 characters; the limit is 1000');
    const empty = await ask(client, { message: '   ' });
    expect(textOf(empty)).toContain('`message` is empty');
    expect(model.requestCount).toBe(0);
  });

  it('refuses a body over the limit as it arrives (a 10 MB message), the session unchanged', async () => {
    const { server, store } = await mcpServer();
    const { client } = await connect(server.url);
    const first = outputOf(await ask(client, { message: 'hello' }));
    const before = await store.readTranscript(first.session);
    const call = ask(client, { message: 'x'.repeat(10 * 1024 * 1024), session: first.session });
    await expect(call).rejects.toThrow(/413|larger than the limit/);
    expect((await store.readTranscript(first.session)).entries).toHaveLength(before.entries.length);
    expect((await store.load(first.session))?.state).toBe('Completed');
  });

  it("refuses another caller's session (auth by principal), the session unchanged", async () => {
    const { server, store } = await mcpServer({
      auth: (req) => (req.headers['x-user'] as string | undefined) || undefined,
    });
    const alice = await connect(server.url, { headers: { 'x-user': 'alice' } });
    const bob = await connect(server.url, { headers: { 'x-user': 'bob' } });
    const first = outputOf(await ask(alice.client, { message: 'hello' }));
    expect((await store.load(first.session))?.meta).toMatchObject({ principal: 'alice' });
    const before = await store.readTranscript(first.session);
    const stolen = await ask(bob.client, { message: 'hi', session: first.session });
    expect(stolen.isError).toBe(true);
    expect(textOf(stolen)).toBe(`ask_helper: session "${first.session}" belongs to another caller`);
    expect((await store.readTranscript(first.session)).entries).toHaveLength(before.entries.length);
    await expect(connect(server.url)).rejects.toThrow(/missing or wrong credentials/);
  });

  it('answers JSON-RPC errors for bad HTTP requests: malformed JSON, no session, an unknown or foreign MCP session', async () => {
    const { server } = await mcpServer({
      auth: (req) => (req.headers['x-user'] as string | undefined) || undefined,
    });
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-user': 'alice',
          ...headers,
        },
        body,
      });
    const malformed = await post('{"jsonrpc": "2.0", ');
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error).toMatchObject({
      code: -32700,
      message: expect.stringContaining('not valid JSON'),
    });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const noSession = await post(list);
    expect(noSession.status).toBe(400);
    expect((await noSession.json()).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('initialize'),
    });
    const unknown = await post(list, { 'mcp-session-id': 'nope' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe(-32001);
    const alice = await connect(server.url, { headers: { 'x-user': 'alice' } });
    const sessionId = (alice.client.transport as StreamableHTTPClientTransport).sessionId!;
    const foreign = await post(list, { 'mcp-session-id': sessionId, 'x-user': 'bob' });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.message).toContain('belongs to another caller');
  });
});

describe('an elicitation answer as an approval', () => {
  it('approves only an accept with decision approve; anything else rejects, with the reason given', () => {
    expect(decisionOf({ action: 'accept', content: { decision: 'approve' } })).toEqual({ approved: true });
    expect(decisionOf({ action: 'accept', content: { decision: 'reject', reason: ' no ' } })).toEqual({
      approved: false,
      reason: 'no',
    });
    expect(decisionOf({ action: 'accept', content: {} })).toEqual({
      approved: false,
      reason: 'rejected in the MCP client',
    });
    expect(decisionOf({ action: 'decline' })).toEqual({
      approved: false,
      reason: 'declined in the MCP client',
    });
    expect(decisionOf({ action: 'cancel', content: { decision: 'approve' } })).toEqual({
      approved: false,
      reason: 'the approval was dismissed in the MCP client',
    });
  });
});

describe('createMcpServer', () => {
  it("names the tool after a definition's name and describes it with the definition's description", async () => {
    const agent = defineAgent({ name: 'analyst', description: 'Reads reports.', instructions: 'You read.' });
    const server = createMcpServer({ agent });
    const client = await connectInMemory(server);
    open.clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.title])).toEqual([['ask_analyst', 'Ask analyst']]);
    expect(tools[0]!.description).toContain('The agent: Reads reports.');
  });

  it("serves users' own tools next to the agents, registered with McpServer's registerTool and checked by it", async () => {
    const model = await startScriptedServer({ respond: routedModel('write_note', {}) });
    open.models.push(model);
    const server = createMcpServer({
      name: 'helper',
      agent: () => ({ instructions: 'You help.', loopControlTools: false }),
      runtime: { baseURL: model.url, apiKey: 'test-key' },
    });
    server.registerTool(
      'add',
      {
        description: 'adds two numbers',
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        outputSchema: z.object({ sum: z.number() }),
      },
      ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
    );
    const client = await connectInMemory(server);
    open.clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask_helper', 'add']);
    expect(Object.keys(tools[0]!.outputSchema?.properties ?? {})).toContain('toolCalls');
    const sum = (await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as CallToolResult;
    expect(sum.structuredContent).toEqual({ sum: 5 });
    const bad = (await client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('Input validation error: Invalid arguments for tool add');
    const answer = (await client.callTool({
      name: 'ask_helper',
      arguments: { message: 'hi' },
    })) as CallToolResult;
    expect(outputOf(answer)).toMatchObject({ state: 'Completed', response: 'echo: hi' });
    const unknown = (await client.callTool({ name: 'ask_nobody', arguments: {} })) as CallToolResult;
    expect(textOf(unknown)).toBe('MCP error -32602: Tool ask_nobody not found');
  });

  it('refuses two agents that would be one tool, and no agent at all', () => {
    const source = () => ({ instructions: 'x' });
    expect(() => createMcpServer({ agents: { 'a b': source, a_b: source } })).toThrow(
      'createMcpServer: agents "a b" and "a_b" would both be the tool ask_a_b',
    );
    expect(() => createMcpServer({})).toThrow('createMcpServer: give `agent` or `agents`');
  });
});
