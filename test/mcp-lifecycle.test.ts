import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../src/index.js';
import { loadMcpConfigFile, mcpToolName } from '../src/mcp/index.js';
import { agentOn, nextEvent } from './support/harness.js';
import { alive, testServer, toolTexts } from './support/mcp-servers.js';
import { waitUntil } from './support/wait-until.js';

// The lifecycle of MCP servers with the tests' own server (test/support/mcp-test-server.mjs, written
// with the MCP SDK's server API): a crash mid-call, a hang past the timeout or an interrupt, a tool
// list that changes, a server that cannot start, and close() leaving no process behind.

const closing: Agent[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((a) => a.close()));
});

function logFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-')), 'server.log');
  writeFileSync(file, '');
  return file;
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const pidOf = (text: string) => Number(/pid (\d+)/.exec(text)?.[1]);

describe('MCP server lifecycle', () => {
  it('a server that dies mid-call gives that call an error result; the next call starts it again', async () => {
    const log = logFile();
    const { agent } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'test__count', arguments: {} }] },
          { toolCalls: [{ name: 'test__crash', arguments: {} }] },
          { content: 'it crashed' },
          { toolCalls: [{ name: 'test__count', arguments: {} }] },
          { content: 'back' },
        ],
      },
      { mcpServers: { test: testServer(log) } },
    );
    closing.push(agent);
    const first = await agent.send('count then crash');
    const [counted, crashed] = toolTexts(first.messages);
    expect(crashed).toMatch(/^Error: MCP server "test" stopped during the call/);
    expect(crashed).toMatch(/about to crash on purpose/);
    expect(first.terminateReason).toBe('completed');
    expect(agent.mcpServers[0]!.state).toBe('down');
    const oldPid = pidOf(counted!);
    await waitUntil(() => !alive(oldPid), 'the crashed server to exit');

    const second = await agent.send('count again');
    const again = toolTexts(second.messages).at(-1)!;
    expect(again).toMatch(/^count 1 from pid \d+$/);
    expect(pidOf(again)).not.toBe(oldPid);
    expect(agent.mcpServers[0]!.state).toBe('ready');
    expect(lines(log).filter((l) => l.endsWith('started'))).toHaveLength(2);
  });

  it('a call past limits.toolTimeoutMs is stopped and the server is told to cancel it', async () => {
    const log = logFile();
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'test__hang', arguments: {} }] }, { content: 'gave up' }] },
      { mcpServers: { test: testServer(log) }, limits: { toolTimeoutMs: 400 } },
    );
    closing.push(agent);
    const result = await agent.send('hang');
    expect(toolTexts(result.messages)[0]).toMatch(/^Error: tool "test__hang" timed out after 400 ms/);
    await waitUntil(() => lines(log).some((l) => / cancelled \d+$/.test(l)), 'the cancellation');
  });

  it("the turn's interrupt cancels a running call on the server", async () => {
    const log = logFile();
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'test__hang', arguments: {} }] }, { content: 'x' }] },
      { mcpServers: { test: testServer(log) } },
    );
    closing.push(agent);
    const started = nextEvent(agent, 'tool_call_start');
    const turn = agent.send('hang');
    await started;
    await waitUntil(() => lines(log).some((l) => l.endsWith('hang started')), 'the call to reach the server');
    agent.interrupt('stop');
    expect((await turn).terminateReason).toBe('interrupted');
    await waitUntil(() => lines(log).some((l) => / cancelled \d+$/.test(l)), 'the cancellation');
  });

  it('tools/list_changed: the new tool is offered on the next model call', async () => {
    const log = logFile();
    const { agent, server } = await agentOn(
      {
        turns: [
          { toolCalls: [{ name: 'test__add_tool', arguments: {} }] },
          { toolCalls: [{ name: 'test__late', arguments: {} }] },
          { content: 'done' },
        ],
      },
      { mcpServers: { test: testServer(log) } },
    );
    closing.push(agent);
    const result = await agent.send('add a tool');
    const names = (i: number) =>
      ((server.requests[i]!.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names(0)).not.toContain('test__late');
    expect(names(1)).toContain('test__late');
    expect(toolTexts(result.messages)).toEqual(['added late', 'late tool answered']);
    // The new list came late, and the model call waited for it.
    expect(lines(log).some((line) => line.endsWith('tools/list held 400 ms'))).toBe(true);
  });

  it('isError results and bad arguments are error results; bad arguments never reach the server', async () => {
    const log = logFile();
    const { agent } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'test__fail', arguments: {} },
              { name: 'test__write_note', arguments: { text: 42 } },
            ],
          },
          { content: 'ok' },
        ],
      },
      { mcpServers: { test: testServer(log) }, approval: 'never' },
    );
    closing.push(agent);
    const result = await agent.send('go');
    const [failed, bad] = toolTexts(result.messages);
    expect(failed).toBe('Error: the widget is jammed');
    expect(bad).toMatch(/^Error: invalid arguments for "test__write_note": .*text must be string/);
    expect(lines(log).some((l) => l.includes('note'))).toBe(false);
  });

  it('a server that fails to start is an error event naming it with its stderr; the others run', async () => {
    const log = logFile();
    const { agent, events } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'good__count', arguments: {} }] }, { content: 'ok' }] },
      { mcpServers: { broken: testServer(log, { MCP_TEST_FAIL_START: '1' }), good: testServer(log) } },
    );
    closing.push(agent);
    await agent.ready();
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'mcp_server' });
    const message = (errors[0] as { message: string }).message;
    expect(message).toMatch(/^MCP server "broken" failed to start: /);
    expect(message).toContain('fatal: the database at db://nowhere is unreachable');
    expect(agent.mcpServers.map((s) => [s.name, s.state])).toEqual([
      ['broken', 'failed'],
      ['good', 'ready'],
    ]);
    const result = await agent.send('count');
    expect(toolTexts(result.messages)[0]).toMatch(/^count 1 from pid/);
  });

  it('close() ends every server process', async () => {
    const log = logFile();
    const { agent } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'a__count', arguments: {} },
              { name: 'b__count', arguments: {} },
            ],
          },
          { content: 'ok' },
        ],
      },
      { mcpServers: { a: testServer(log), b: testServer(log) } },
    );
    const result = await agent.send('count');
    const pids = toolTexts(result.messages).map(pidOf);
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    await agent.close();
    expect(pids.filter(alive)).toEqual([]);
    expect(agent.mcpServers.map((s) => s.state)).toEqual(['closed', 'closed']);
  });
});

describe('MCP config and naming', () => {
  it('names tools <server>__<tool>, characters outside [A-Za-z0-9_-] replaced, cut to 64', () => {
    expect(mcpToolName('everything', 'echo')).toBe('everything__echo');
    expect(mcpToolName('my.server', 'read file/v2')).toBe('my_server__read_file_v2');
    const long = mcpToolName('s', 'x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long.startsWith('s__xxx')).toBe(true);
  });

  it('reads an mcp.json and names the file and key of what is wrong', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-config-'));
    const file = path.join(dir, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          local: { command: 'node', args: ['server.js'], env: { A: 'b' } },
          remote: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' } },
          off: { command: 'nope', disabled: true },
        },
      }),
    );
    expect(await loadMcpConfigFile(file)).toEqual({
      local: { command: 'node', args: ['server.js'], env: { A: 'b' } },
      remote: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' } },
    });
    const bad = async (servers: unknown) => {
      writeFileSync(file, JSON.stringify({ mcpServers: servers }));
      return loadMcpConfigFile(file).then(
        () => 'no error',
        (e: Error) => e.message,
      );
    };
    expect(await bad({ x: { command: 'a', args: 'not-a-list' } })).toBe(
      `${file}: mcpServers.x.args: Invalid input: expected array, received string`,
    );
    expect(await bad({ x: { url: 'ftp://h/mcp' } })).toBe(
      `${file}: mcpServers.x.url: expected an http:// or https:// URL`,
    );
    expect(await bad({ x: { args: [] } })).toMatch(/mcpServers\.x: expected "command" .* or "url"/);
    expect(await bad({ x: { command: 'a', approval: 'sometimes' } })).toMatch(/mcpServers\.x\.approval: /);
    expect(await bad({ 'bad name!': { command: 'a' } })).toMatch(/mcpServers\.bad name!: a server name/);
    expect(await bad({ x: { type: 'sse', command: 'a' } })).toMatch(/mcpServers\.x\.type: /);
    writeFileSync(file, '{ nope');
    await expect(loadMcpConfigFile(file)).rejects.toThrow(`${file}: not valid JSON`);
    await expect(loadMcpConfigFile(path.join(dir, 'missing.json'))).rejects.toThrow(/not found/);
  });
});
