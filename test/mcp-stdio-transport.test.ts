import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpStdioServerTransport } from '../src/server/mcp/index.js';
import { messageProblem, readJsonRpcLine } from '../src/server/mcp/jsonrpc-line.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';

// agentloop's stdio transport for MCP servers (src/server/mcp/stdio-transport.ts): each line checked
// as the SDK's JSONRPCMessageSchema checks it, and a line that is no message answered with a JSON-RPC
// error. In process over real streams, and `agentloop mcp serve` (which runs it) over real stdio.

const VALID: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_x', arguments: { message: 'hi' } } },
  { jsonrpc: '2.0', id: 'a', method: 'ping' },
  { jsonrpc: '2.0', id: 2, method: 'x', params: { _meta: { progressToken: 'p', other: 1 }, extra: [1] } },
  { jsonrpc: '2.0', id: 3, method: 'x', params: { _meta: { progressToken: 4 } } },
  {
    jsonrpc: '2.0',
    id: 4,
    method: 'x',
    params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'r' } },
  { jsonrpc: '2.0', id: 5, result: {} },
  { jsonrpc: '2.0', id: 'b', result: { action: 'accept', content: { approve: true }, _meta: {} } },
  { jsonrpc: '2.0', id: 6, error: { code: -32601, message: 'no such method', data: { x: 1 } } },
  { jsonrpc: '2.0', error: { code: -32700, message: 'parse error' } },
];
const INVALID: unknown[] = [
  null,
  42,
  'text',
  [],
  [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
  {},
  { id: 1, method: 'ping' },
  { jsonrpc: '1.0', id: 1, method: 'ping' },
  { jsonrpc: 2, id: 1, method: 'ping' },
  { jsonrpc: '2.0', id: 1, method: 5 },
  { jsonrpc: '2.0', id: 1.5, method: 'ping' },
  { jsonrpc: '2.0', id: null, method: 'ping' },
  { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' },
  { jsonrpc: '2.0', id: 2 ** 60, method: 'ping' },
  { jsonrpc: '2.0', id: 1, method: 'ping', extra: true },
  { jsonrpc: '2.0', method: 'note', extra: true },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: [1, 2] },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: 'p' },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: 'm' } },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { progressToken: 1.5 } } },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { progressToken: null } } },
  { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { 'io.modelcontextprotocol/related-task': {} } } },
  { jsonrpc: '2.0', id: 1, result: 'ok' },
  { jsonrpc: '2.0', id: 1, result: [] },
  { jsonrpc: '2.0', result: {} },
  { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } },
  { jsonrpc: '2.0', id: 1, result: { _meta: { progressToken: false } } },
  { jsonrpc: '2.0', id: 1, method: 'ping', result: {} },
  { jsonrpc: '2.0', id: 1, error: 'bad' },
  { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } },
  { jsonrpc: '2.0', id: 1, error: { code: -1 } },
  { jsonrpc: '2.0', id: null, error: { code: -1, message: 'm' } },
  { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'm' }, extra: 1 },
  JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{"x":1}}'),
];

describe('readJsonRpcLine: the SDK schema’s verdict, without the SDK schema', () => {
  it('accepts exactly the messages JSONRPCMessageSchema accepts', () => {
    for (const value of [...VALID, ...INVALID]) {
      const sdk = JSONRPCMessageSchema.safeParse(value).success;
      expect({ value, accepted: messageProblem(value) === undefined }).toEqual({ value, accepted: sdk });
    }
    // Both lists say what they mean (the table above is not all one kind).
    expect(VALID.every((v) => JSONRPCMessageSchema.safeParse(v).success)).toBe(true);
    expect(INVALID.some((v) => JSONRPCMessageSchema.safeParse(v).success)).toBe(false);
  });

  it('names the problem, with the id when the line had one', () => {
    expect(readJsonRpcLine('{"jsonrpc":"2.0","id":1,')).toEqual({
      error: { code: -32700, message: expect.stringMatching(/^Parse error: the line is not JSON/), id: null },
    });
    expect(readJsonRpcLine('{"jsonrpc":"2.0","id":7,"method":5}')).toEqual({
      error: { code: -32600, message: 'Invalid Request: `method` must be a string', id: 7 },
    });
    expect(readJsonRpcLine('{"jsonrpc":"2.0","id":"q","method":"ping","x":1}').error).toEqual({
      code: -32600,
      message: 'Invalid Request: unknown member "x"',
      id: 'q',
    });
    expect(readJsonRpcLine('[1]').error).toMatchObject({ code: -32600, id: null });
  });
});

/** The transport on two in-process streams; what it delivered, reported and answered. */
function onStreams(maxLineBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new McpStdioServerTransport(stdin, stdout, maxLineBytes ? { maxLineBytes } : {});
  const messages: unknown[] = [];
  const errors: string[] = [];
  const answers: unknown[] = [];
  let out = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (let at = out.indexOf('\n'); at !== -1; at = out.indexOf('\n')) {
      answers.push(JSON.parse(out.slice(0, at)));
      out = out.slice(at + 1);
    }
  });
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e.message);
  return { stdin, transport, messages, errors, answers };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('McpStdioServerTransport on streams', () => {
  it('splits lines across and within chunks (CRLF, UTF-8 split mid-character) and sends one line a message', async () => {
    const { stdin, transport, messages, answers } = onStreams();
    await transport.start();
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { word: 'grüße ✓' } });
    const bytes = Buffer.from(`${text}\r\n${JSON.stringify({ jsonrpc: '2.0', method: 'n' })}\n\n`);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1; // inside the three bytes of ✓
    stdin.write(bytes.subarray(0, 5));
    stdin.write(bytes.subarray(5, cut));
    stdin.write(bytes.subarray(cut));
    await tick();
    expect(messages).toEqual([JSON.parse(text), { jsonrpc: '2.0', method: 'n' }]);
    await transport.send({ jsonrpc: '2.0', id: 1, result: { ok: 'ü' } });
    await tick();
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 1, result: { ok: 'ü' } }]);
    await expect(transport.start()).rejects.toThrow(/already started/);
  });

  it('answers a line that is no message with a JSON-RPC error, and reads on', async () => {
    const { stdin, transport, messages, errors, answers } = onStreams(64);
    await transport.start();
    stdin.write('not json\n');
    stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping","extra":1}\n');
    stdin.write(`{"jsonrpc":"2.0","id":4,"method":"${'x'.repeat(40)}`);
    stdin.write(`${'y'.repeat(40)}"}\n`); // 90 bytes in all: over the 64-byte limit
    stdin.write(`${'z'.repeat(100)}\n`); // over the limit within one chunk
    stdin.write('{"jsonrpc":"2.0","id":5,"method":"ping"}\n');
    await tick();
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 5, method: 'ping' }]);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } },
      { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: unknown member "extra"' } },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: the message is longer than 64 bytes' },
      },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: the message is longer than 64 bytes' },
      },
    ]);
    expect(errors).toHaveLength(4);
  });

  it('reports a throwing handler instead of throwing from the stream, and closes once asked', async () => {
    const { stdin, transport, errors } = onStreams();
    transport.onmessage = () => {
      throw new Error('handler broke');
    };
    let closed = 0;
    transport.onclose = () => {
      closed += 1;
    };
    await transport.start();
    stdin.write('{"jsonrpc":"2.0","method":"n"}\n');
    await tick();
    expect(errors).toEqual(['handler broke']);
    await transport.close();
    expect(closed).toBe(1);
    expect(stdin.listenerCount('data')).toBe(0);
  });
});

describe('agentloop mcp serve over real stdio, on this transport', () => {
  let dir = '';
  let model: ScriptedServer;
  const children: ChildProcessWithoutNullStreams[] = [];
  const clients: Client[] = [];
  beforeAll(async () => {
    await buildDist();
    dir = await mkdtemp(path.join(tmpdir(), 'mcp-line-'));
    model = await startScriptedServer({ respond: () => ({ content: 'hello back' }) });
  }, 300_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
    for (const child of children.splice(0)) child.kill();
  });
  afterAll(async () => {
    await model?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  const serveArgs = () => [
    cliPath,
    'mcp',
    'serve',
    '--bundle',
    path.join(repoRoot, 'bundles', 'requirements-workflow'),
    '--agent',
    'intake-facilitator',
    '--store',
    path.join(dir, 'sessions'),
    '--base-url',
    model.url,
    '--api-key',
    'test-key',
    '--model',
    'scripted',
  ];

  it('answers hostile lines with JSON-RPC errors and then serves a request as usual', async () => {
    const child = spawn(process.execPath, serveArgs(), { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
    children.push(child);
    const answers: Record<string, unknown>[] = [];
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      for (let at = out.indexOf('\n'); at !== -1; at = out.indexOf('\n')) {
        answers.push(JSON.parse(out.slice(0, at)));
        out = out.slice(at + 1);
      }
    });
    const until = async (n: number) => {
      for (let i = 0; i < 6000 && answers.length < n && child.exitCode === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(answers.length).toBeGreaterThanOrEqual(n);
    };
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":\n');
    child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"initialize","params":[]}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping","session":"x"}\n');
    child.stdin.write('[{"jsonrpc":"2.0","id":4,"method":"ping"}]\n');
    await until(4);
    expect(answers.slice(0, 4)).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } },
      {
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32600, message: 'Invalid Request: `params` must be an object' },
      },
      {
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32600, message: 'Invalid Request: unknown member "session"' },
      },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('JSON object') } },
    ]);
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      })}\n`,
    );
    await until(5);
    expect(answers[4]).toMatchObject({
      jsonrpc: '2.0',
      id: 5,
      result: { serverInfo: { name: 'agentloop' } },
    });
    expect(child.exitCode).toBeNull();
  }, 120_000);

  it('serves the SDK’s own client: an ask_<agent> call with its structured content', async () => {
    const client = new Client({ name: 'line-test', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: serveArgs(), cwd: dir, stderr: 'pipe' }),
    );
    clients.push(client);
    const result = (await client.callTool({
      name: 'ask_intake-facilitator',
      arguments: { message: 'hi' },
    })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({
      response: 'hello back',
      success: true,
      state: 'Completed',
    });
  }, 120_000);
});
