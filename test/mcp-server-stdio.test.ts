import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main as cliMain } from '../src/cli/main.js';
import { FileSessionStore } from '../src/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';
import { askWith, outputOf, routedModel, textOf } from './support/mcp-agent-server.js';
import { waitUntil } from './support/wait-until.js';

// `agentloop mcp serve` as an MCP client starts it: the built CLI spawned over stdio by the MCP SDK's
// own client, the bundle's facilitator on a scripted model, sessions in a folder.

const TOOL = 'ask_intake-facilitator';
let dir = '';
let model: ScriptedServer;
const clients: Client[] = [];

beforeAll(async () => {
  await buildDist();
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-stdio-'));
  model = await startScriptedServer({
    respond: routedModel('save_output', { file_path: 'note.md', content: 'remember MCP' }),
  });
}, 300_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
});
afterAll(async () => {
  await model?.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** Starts `agentloop mcp serve` through the SDK's stdio client; `elicit` answers approval questions. */
async function serve(options: { elicit?: () => ElicitResult; flags?: string[]; out?: string } = {}) {
  const out = options.out ?? (await mkdtemp(path.join(dir, 'out-')));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      cliPath,
      'mcp',
      'serve',
      '--bundle',
      path.join(repoRoot, 'bundles', 'requirements-workflow'),
      '--agent',
      'intake-facilitator',
      '--output',
      out,
      '--store',
      path.join(dir, 'sessions'),
      '--base-url',
      model.url,
      '--api-key',
      'test-key',
      '--model',
      'scripted',
      ...(options.flags ?? []),
    ],
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1' } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'stdio-test', version: '1.0.0' },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  const asked: string[] = [];
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return answer();
    });
  }
  await client.connect(transport);
  clients.push(client);
  return { client, asked, out };
}

const ask = (client: Client, args: Record<string, unknown>, options?: Parameters<typeof askWith>[3]) =>
  askWith(client, TOOL, args, options);

describe('agentloop mcp serve over stdio', () => {
  it('answers with progress, continues the session, stops on cancel, refuses bad input and unapproved calls', async () => {
    const { client, out } = await serve();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([TOOL]);
    const progress: Progress[] = [];
    const first = await ask(client, { message: 'hello' }, { onprogress: (p) => progress.push(p) });
    expect(textOf(first)).toContain('echo: hello');
    expect(progress.map((p) => p.message)).toEqual(['thinking (model call 1)']);
    const session = outputOf(first).session;
    const second = await ask(client, { message: 'again', session });
    expect(outputOf(second)).toMatchObject({ session, state: 'Completed', response: 'echo: again' });
    const store = new FileSessionStore({ dir: path.join(dir, 'sessions') });
    expect((await store.load(session))?.meta).toMatchObject({
      principal: 'local',
      agent: expect.stringContaining('intake-facilitator'),
    });

    // The client's cancel interrupts the turn; the next message continues the session.
    const seen = model.requestCount;
    const cancel = new AbortController();
    const call = ask(client, { message: 'hang on', session }, { signal: cancel.signal });
    await waitUntil(() => model.requestCount > seen);
    cancel.abort('enough');
    await expect(call).rejects.toThrow();
    const next = await ask(client, { message: 'back', session });
    expect(outputOf(next)).toMatchObject({ session, state: 'Completed', response: 'echo: back' });
    const sent = model.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(sent.slice(-4)).toEqual(['hello', 'again', 'hang on', 'back']);

    // A call needing approval, from a client without elicitation: refused, saying how to allow it.
    const refused = await ask(client, { message: 'save a note' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('"save_output" needs approval');
    expect(textOf(refused)).toContain('--allow save_output');
    expect(existsSync(path.join(out, 'note.md'))).toBe(false);

    expect(textOf(await ask(client, { message: 'hi', session: 'nope' }))).toContain('no session "nope"');
    const huge = await ask(client, { message: 'x'.repeat(300_000) });
    expect(huge.isError).toBe(true);
    expect(textOf(huge)).toContain('the limit is 200000');
    expect(textOf(await ask(client, {}))).toContain(TOOL);
  }, 60_000);

  it('asks approval as an elicitation: approve writes the file, reject does not', async () => {
    let decision = 'approve';
    const { client, asked, out } = await serve({
      elicit: () => ({ action: 'accept', content: { decision, reason: 'not now' } }),
    });
    const approved = await ask(client, { message: 'save a note' });
    expect(asked[0]).toContain('"save_output"');
    expect(outputOf(approved).toolCalls).toMatchObject([{ name: 'save_output', status: 'ok' }]);
    expect(await readFile(path.join(out, 'note.md'), 'utf8')).toBe('remember MCP');
    await rm(path.join(out, 'note.md'));
    decision = 'reject';
    const rejected = await ask(client, { message: 'save a note' });
    expect(outputOf(rejected).toolCalls).toMatchObject([{ name: 'save_output', status: 'declined' }]);
    expect(existsSync(path.join(out, 'note.md'))).toBe(false);
  }, 60_000);

  it('--allow <tool> lets its calls run without asking', async () => {
    const { client, out } = await serve({ flags: ['--allow', 'save_output'] });
    expect((await ask(client, { message: 'save a note' })).isError).toBeUndefined();
    expect(await readFile(path.join(out, 'note.md'), 'utf8')).toBe('remember MCP');
  }, 60_000);

  it('--http <port> --token serves Streamable HTTP on loopback with the bearer token; SIGTERM stops it (exit 0)', async () => {
    const child = spawn(
      process.execPath,
      [
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
        '--http',
        '0',
        '--token',
        'sesame',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (s: string) => resolve(s.trim().split('\n')[0]!));
      child.on('exit', (code) => reject(new Error(`mcp serve exited ${code}: ${stderr}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: 'Bearer sesame' } },
      }),
    );
    clients.push(client);
    expect(textOf(await ask(client, { message: 'hello over http' }))).toContain('echo: hello over http');
    await client.close();
    const stranger = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(stranger.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow(
      /missing or wrong credentials/,
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('MCP endpoint (Streamable HTTP)');
  }, 60_000);

  it('prints its help, and refuses flags that do not fit (exit 2, naming the flag)', async () => {
    const run = async (args: string[]) => {
      let out = '';
      let err = '';
      const code = await cliMain(args, {
        stdout: (t) => {
          out += t;
        },
        stderr: (t) => {
          err += t;
        },
      });
      return { code, out, err };
    };
    const help = await run(['mcp', 'serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('ask_<agent>');
    expect(help.out).toContain('--allow <tool>');
    expect((await run(['mcp', '--help'])).out).toContain('agentloop mcp serve');
    const bundle = [
      '--bundle',
      path.join(repoRoot, 'bundles', 'requirements-workflow'),
      '--agent',
      'intake-facilitator',
    ];
    // No agent, no skills, no MCP server: nothing to serve.
    const nothing = await run(['mcp', 'serve', '--store', path.join(dir, 'sessions')]);
    expect(nothing.code).toBe(2);
    expect(nothing.err).toContain(
      'missing --agent <id> (with --bundle or --project), --skills <dir> or --mcp-config <file>',
    );
    const stdioHost = await run(['mcp', 'serve', ...bundle, '--host', '0.0.0.0']);
    expect(stdioHost.code).toBe(2);
    expect(stdioHost.err).toContain('--host and --token are for --http <port>');
    const exposed = await run([
      'mcp',
      'serve',
      ...bundle,
      '--store',
      path.join(dir, 'sessions'),
      '--http',
      '0',
      '--host',
      '0.0.0.0',
    ]);
    expect(exposed.code).toBe(2);
    expect(exposed.err).toContain('without auth');
  }, 60_000);
});
