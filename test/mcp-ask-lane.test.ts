import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  type JSONRPCMessage,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemorySessionStore } from '../src/index.js';
import { createMcpServer, McpStdioServerTransport, withAskLane } from '../src/server/mcp/index.js';
import { RunningSessions } from '../src/server/mcp/running-sessions.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { askWith, noteWriter, outputOf, routedModel, textOf } from './support/mcp-agent-server.js';
import { waitUntil } from './support/wait-until.js';

// The stdio lane (src/server/mcp/own-call-lane.ts): `ask_` calls answered below the SDK's Protocol,
// everything else through it. The server is createMcpServer on agentloop's stdio transport over real
// streams; the client is the MCP SDK's own Client (on the SDK's newline-JSON stream transport) or raw
// JSON-RPC lines. `laneOnly` servers have the Protocol's `tools/call` handler removed (the SDK's
// public removeRequestHandler), so what they answer can only have come through the lane.

const TOOL = 'ask_helper';
let model: ScriptedServer;
let written: string[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  model = await startScriptedServer({ respond: routedModel('write_note', { text: 'remember MCP' }) });
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => {})));
  written = [];
});
afterAll(async () => {
  await model?.close();
});

/** createMcpServer on agentloop's stdio transport over two streams, with the lane unless `lane: false`. */
async function serve(
  options: {
    lane?: boolean;
    laneOnly?: boolean;
    opening?: { entered: () => void; gate: Promise<void> };
  } = {},
) {
  const writeNote = noteWriter((text) => written.push(text));
  const running = new RunningSessions();
  const server = createMcpServer(
    {
      name: 'helper',
      // `opening`: the agent's options come once the test opens the gate (a slow factory: a bundle loading).
      agent: options.opening
        ? async () => {
            options.opening?.entered();
            await options.opening?.gate;
            return { instructions: 'You help.', loopControlTools: false, tools: [writeNote] };
          }
        : () => ({ instructions: 'You help.', loopControlTools: false, tools: [writeNote] }),
      store: new MemorySessionStore(),
      runtime: { baseURL: model.url, apiKey: 'test-key' },
    },
    running,
  );
  // A user's own tool next to the agent: McpServer's, through the Protocol.
  server.registerTool(
    'shout',
    { description: 'upper-cases a word', inputSchema: z.object({ word: z.string() }) },
    ({ word }) => ({ content: [{ type: 'text', text: word.toUpperCase() }] }),
  );
  if (options.laneOnly) server.server.removeRequestHandler('tools/call');
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const stdio = new McpStdioServerTransport(toServer, fromServer);
  await server.connect(options.lane === false ? stdio : withAskLane(server, stdio));
  const lines: JSONRPCMessage[] = [];
  let out = '';
  fromServer.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (let at = out.indexOf('\n'); at !== -1; at = out.indexOf('\n')) {
      lines.push(JSON.parse(out.slice(0, at)));
      out = out.slice(at + 1);
    }
  });
  closers.push(async () => {
    await server.close();
    await running.idle();
  });
  return { server, running, toServer, fromServer, lines };
}

/** The SDK's own Client on a served pair of streams; `elicit` answers approval questions. */
async function connect(served: Awaited<ReturnType<typeof serve>>, elicit?: () => ElicitResult) {
  const client = new Client(
    { name: 'lane-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  const asked: string[] = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return elicit();
    });
  }
  // The SDK's newline-delimited JSON transport on streams (its server class; the framing is the same both ways).
  await client.connect(new StdioServerTransport(served.fromServer, served.toServer));
  closers.unshift(() => client.close());
  return { client, asked };
}

const ask = (client: Client, args: Record<string, unknown>, options?: Parameters<typeof askWith>[3]) =>
  askWith(client, TOOL, args, options);
/** A result with what differs between two runs of the same turn (the new session's id, tool call ids) named alike. */
const comparable = (result: unknown) =>
  JSON.parse(
    JSON.stringify(result)
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
      .replace(/"id":"call_[^"]*"/g, '"id":"<call>"'),
  );

/** Writes raw JSON-RPC lines to a served pair and waits for the answers to the ones with ids. */
async function rawExchange(served: Awaited<ReturnType<typeof serve>>, messages: object[]) {
  const from = served.lines.length;
  for (const message of messages) served.toServer.write(`${JSON.stringify(message)}\n`);
  const ids = messages.flatMap((m) => ('id' in m && !('result' in m) ? [m.id] : []));
  const answered = () => served.lines.slice(from).filter((m) => 'id' in m && ('result' in m || 'error' in m));
  await waitUntil(() => ids.every((id) => answered().some((m) => 'id' in m && m.id === id)));
  return answered();
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('withAskLane: ask_ calls below the Protocol', () => {
  it('answers ask_ with the result and progress the Protocol path gives, without its tools/call handler', async () => {
    const lane = await serve({ laneOnly: true });
    const protocol = await serve({ lane: false });
    const { client: viaLane } = await connect(lane);
    const { client: viaProtocol } = await connect(protocol);
    const progress = { lane: [] as Progress[], protocol: [] as Progress[] };
    const first = await ask(viaLane, { message: 'hello' }, { onprogress: (p) => progress.lane.push(p) });
    const same = await ask(
      viaProtocol,
      { message: 'hello' },
      { onprogress: (p) => progress.protocol.push(p) },
    );
    expect(textOf(first)).toContain('echo: hello');
    expect(outputOf(first)).toMatchObject({ state: 'Completed', success: true, response: 'echo: hello' });
    expect(comparable(first)).toEqual(comparable(same));
    expect(progress.lane.map((p) => p.message)).toEqual(['thinking (model call 1)']);
    expect(progress.lane).toEqual(progress.protocol);
    // The session continues through the lane.
    const session = outputOf(first).session;
    const again = await ask(viaLane, { message: 'again', session });
    expect(outputOf(again)).toMatchObject({ session, response: 'echo: again' });
    // Bad arguments: the same tool errors as through the Protocol.
    for (const args of [{}, { message: 5 }, { message: 'hi', session: ['x'] }, { message: ' ' }]) {
      const refused = await ask(viaLane, args);
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^ask_helper: /);
      expect(refused).toEqual(await ask(viaProtocol, args));
    }
    expect(textOf(await ask(viaLane, {}))).toBe(
      'ask_helper: `message` is missing: send the text for the agent as a string',
    );
    // What is not an ask_ call still goes to the Protocol, which here has no tools/call handler.
    await expect(viaLane.callTool({ name: 'shout', arguments: { word: 'hi' } })).rejects.toThrow(
      /Method not found/,
    );
    expect((await viaLane.listTools()).tools.map((t) => t.name)).toEqual([TOOL, 'shout']);
  }, 30_000);

  it('serves a user’s own tool next to ask_ through McpServer, and lists the same tools as without the lane', async () => {
    const lane = await serve();
    const protocol = await serve({ lane: false });
    const { client } = await connect(lane);
    const { client: other } = await connect(protocol);
    const shouted = (await client.callTool({ name: 'shout', arguments: { word: 'hi' } })) as CallToolResult;
    expect(textOf(shouted)).toBe('HI');
    // McpServer's input check of the user's tool still runs.
    const bad = (await client.callTool({ name: 'shout', arguments: { word: 1 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(bad).toEqual(await other.callTool({ name: 'shout', arguments: { word: 1 } }));
    expect(await client.listTools()).toEqual(await other.listTools());
    expect(outputOf(await ask(client, { message: 'hello' })).response).toBe('echo: hello');
  }, 30_000);

  it('cancel while the session opens: the turn never starts', async () => {
    let entered!: () => void;
    const inFactory = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const lane = await serve({ laneOnly: true, opening: { entered, gate } });
    const { client } = await connect(lane);
    // Registered after the transport's own reader: once this sees the cancel, the lane has taken it.
    let cancelReceived = false;
    lane.toServer.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('notifications/cancelled')) cancelReceived = true;
    });
    const seen = model.requestCount;
    const cancel = new AbortController();
    const call = ask(client, { message: 'never sent' }, { signal: cancel.signal });
    await inFactory;
    cancel.abort('changed my mind');
    await expect(call).rejects.toThrow();
    await waitUntil(() => cancelReceived);
    open();
    await lane.running.idle();
    expect(model.requestCount).toBe(seen);
  }, 30_000);

  it('cancel: the client’s notifications/cancelled interrupts the turn and no answer is sent', async () => {
    const lane = await serve({ laneOnly: true });
    const { client } = await connect(lane);
    const first = await ask(client, { message: 'hello' });
    const session = outputOf(first).session;
    const seen = model.requestCount;
    const cancel = new AbortController();
    const call = ask(client, { message: 'hang on', session }, { signal: cancel.signal });
    await waitUntil(() => model.requestCount > seen);
    const sent = lane.lines.length;
    cancel.abort('enough');
    await expect(call).rejects.toThrow();
    await lane.running.idle(); // the turn came to rest (it would hang for ever uncancelled)
    const next = await ask(client, { message: 'back', session });
    expect(outputOf(next)).toMatchObject({ session, state: 'Completed', response: 'echo: back' });
    // Between the cancel and the next call's answer: only that answer (nothing for the cancelled call).
    expect(lane.lines.slice(sent).filter((m) => 'result' in m || 'error' in m)).toHaveLength(1);
    const user = model.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(user).toEqual(['hello', 'hang on', 'back']);
  }, 30_000);

  it('asks approval as an elicitation through the server: approve runs the call, reject does not', async () => {
    const lane = await serve({ laneOnly: true });
    let decision = 'approve';
    const { client, asked } = await connect(lane, () => ({
      action: 'accept',
      content: { decision, reason: 'not now' },
    }));
    const approved = await ask(client, { message: 'write a note' });
    expect(asked[0]).toContain('"write_note"');
    expect(outputOf(approved).toolCalls).toMatchObject([{ name: 'write_note', status: 'ok' }]);
    expect(written).toEqual(['remember MCP']);
    // The question went out as a request tied to the call (the Protocol's relatedRequestId; on stdio, one line).
    expect(lane.lines.some((m) => 'method' in m && m.method === 'elicitation/create')).toBe(true);
    decision = 'reject';
    const rejected = await ask(client, { message: 'write a note' });
    expect(outputOf(rejected).toolCalls).toMatchObject([{ name: 'write_note', status: 'declined' }]);
    expect(written).toEqual(['remember MCP']);
  }, 30_000);

  it('refuses a call needing approval when the client cannot be asked, saying how to allow it', async () => {
    const lane = await serve({ laneOnly: true });
    const { client } = await connect(lane);
    const refused = await ask(client, { message: 'write a note' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('"write_note" needs approval');
    expect(textOf(refused)).toContain('--allow write_note');
    expect(written).toEqual([]);
  }, 30_000);

  it('answers raw requests as the Protocol does: before initialize, and what the lane leaves to the Protocol', async () => {
    const lane = await serve();
    const protocol = await serve({ lane: false });
    const call = (id: number, params: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });
    const requests = [
      // Before initialize: the Protocol answers tools/call anyway (no client capabilities: no elicitation).
      call(1, { name: TOOL, arguments: { message: 'hello' } }),
      INITIALIZE,
      call(2, { name: TOOL, arguments: ['hello'] }), // not an object: the Protocol's InvalidParams
      call(3, { name: TOOL }), // no arguments: the tool's own refusal
      call(4, { name: 'ask_nobody', arguments: { message: 'hi' } }),
      call(5, { name: TOOL, arguments: { message: 'hi' }, _meta: { progressToken: 'p' } }),
      { jsonrpc: '2.0', id: 6, method: 'no/such' },
    ];
    const viaLane = await rawExchange(lane, requests);
    const viaProtocol = await rawExchange(protocol, requests);
    const byId = (answers: JSONRPCMessage[]) =>
      comparable(Object.fromEntries(answers.map((m) => ['id' in m ? m.id : '', m])));
    expect(byId(viaLane)).toEqual(byId(viaProtocol));
    expect(byId(viaLane)[1].result.structuredContent.response).toBe('echo: hello');
    expect(byId(viaLane)[2].error.message).toMatch(/arguments/);
    // The progress notification for id 5 went out through the lane too, as through the Protocol.
    const progressOf = (lines: JSONRPCMessage[]) =>
      lines.filter((m) => 'method' in m && m.method === 'notifications/progress');
    expect(progressOf(lane.lines)).toEqual(progressOf(protocol.lines));
    expect(progressOf(lane.lines)).toHaveLength(1);
  }, 30_000);

  it('closing the server aborts the lane’s turns', async () => {
    const lane = await serve({ laneOnly: true });
    const { client } = await connect(lane);
    const seen = model.requestCount;
    const call = ask(client, { message: 'hang' }).catch((error: unknown) => error);
    await waitUntil(() => model.requestCount > seen);
    await lane.server.close();
    await lane.running.idle(); // the turn came to rest (it would hang for ever unaborted)
    await client.close();
    expect(await call).toBeInstanceOf(Error);
  }, 30_000);
});
