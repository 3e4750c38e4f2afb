// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` placeholders in plain strings are what these tests are about
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpServersFlag } from '../src/cli/flags/mcp-config-flag.js';
import { main } from '../src/cli/main.js';
import { loadMcpConfigFile, parseMcpServers } from '../src/mcp/index.js';
import { testServerFile } from './support/mcp-servers.js';

// The config files users already have: `${VAR}` placeholders, several files, the project's .mcp.json.

const env = { HOME_DIR: '/home/u', TOKEN: 'tok-123', EMPTY: '' };

describe('placeholders in mcpServers', () => {
  it('fills ${VAR} and ${VAR:-default} in command, args, env, url and headers', () => {
    const servers = parseMcpServers(
      {
        local: {
          command: '${HOME_DIR}/bin/server',
          args: ['--root', '${ROOT:-/srv}', 'plain', '${EMPTY:-fallback}'],
          env: { API_TOKEN: '${TOKEN}', LEVEL: '${LEVEL:-info}' },
          cwd: '${NOT_FILLED}',
        },
        remote: {
          url: 'https://${HOST:-example.com}/mcp',
          headers: { Authorization: 'Bearer ${TOKEN}' },
        },
      },
      'mcp.json',
      env,
    );
    expect(servers).toEqual({
      local: {
        command: '/home/u/bin/server',
        args: ['--root', '/srv', 'plain', 'fallback'],
        env: { API_TOKEN: 'tok-123', LEVEL: 'info' },
        cwd: '${NOT_FILLED}',
      },
      remote: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer tok-123' } },
    });
  });

  it('a variable unset without a default is an error naming the server, the key and the variable', () => {
    const error = (server: unknown) => {
      try {
        parseMcpServers({ s: server }, 'mcp.json: mcpServers', env);
        return 'no error';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(error({ url: 'https://${API_HOST}/mcp' })).toBe(
      'mcp.json: mcpServers.s.url: the environment variable "API_HOST" is not set (set it, or write ${API_HOST:-default})',
    );
    expect(error({ command: 'x', args: ['a', '${MISSING}'] })).toMatch(
      /^mcp\.json: mcpServers\.s\.args\[1\]: the environment variable "MISSING" is not set/,
    );
    expect(error({ url: 'https://h/mcp', headers: { 'X-Key': '${KEY}' } })).toMatch(
      /^mcp\.json: mcpServers\.s\.headers\.X-Key: the environment variable "KEY"/,
    );
    expect(error({ command: 'x', env: { A: '${B}' } })).toMatch(/mcpServers\.s\.env\.A: .*"B"/);
    // A disabled server is not looked at.
    expect(error({ command: '${NOPE}', disabled: true })).toBe('no error');
  });

  it('reads the type and oauth settings of a remote server', () => {
    expect(
      parseMcpServers({
        old: { type: 'sse', url: 'http://h/sse' },
        new: {
          type: 'streamable-http',
          url: 'http://h/mcp',
          oauth: { clientId: 'agentloop', scope: 'read' },
        },
        any: { url: 'http://h/mcp' },
      }),
    ).toEqual({
      old: { type: 'sse', url: 'http://h/sse' },
      new: { type: 'http', url: 'http://h/mcp', oauth: { clientId: 'agentloop', scope: 'read' } },
      any: { url: 'http://h/mcp' },
    });
    expect(() =>
      parseMcpServers({ x: { url: 'http://h/mcp', oauth: { clientMetadataUrl: 'http://h/c' } } }),
    ).toThrow('mcpServers.x.oauth.clientMetadataUrl: expected an https:// URL');
  });
});

describe('config files', () => {
  it("merges the project's .mcp.json and every --mcp-config file; a later file wins", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-mcp-files-'));
    const write = (name: string, servers: object) =>
      writeFile(path.join(dir, name), JSON.stringify({ mcpServers: servers }));
    await write('.mcp.json', { a: { command: 'project-a' }, b: { command: 'project-b' } });
    await write('one.json', { b: { command: 'one-b' } });
    await write('two.json', { c: { url: 'http://h/mcp' } });
    const flag = await mcpServersFlag([path.join(dir, 'one.json'), path.join(dir, 'two.json')], dir);
    expect(flag.project).toBe(path.join(dir, '.mcp.json'));
    expect(flag.files).toEqual([path.join(dir, 'one.json'), path.join(dir, 'two.json')]);
    expect(flag.servers).toEqual({
      a: { command: 'project-a' },
      b: { command: 'one-b' },
      c: { url: 'http://h/mcp' },
    });
    expect((await mcpServersFlag(undefined, path.join(dir, 'elsewhere'))).servers).toEqual({});
    await expect(loadMcpConfigFile(path.join(dir, 'three.json'))).rejects.toThrow(/not found/);
  });

  it('`run` reads the project .mcp.json (with placeholders) and says so; --mcp-config adds servers', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-mcp-run-'));
    process.env.AGENTLOOP_TEST_NODE = process.execPath;
    const server = (name: string) => ({
      command: '${AGENTLOOP_TEST_NODE}',
      args: [testServerFile],
      env: { MCP_TEST_LOG: '${MCP_TEST_LOG_UNSET:-}', NAME: name },
      approval: 'never',
    });
    await writeFile(path.join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { proj: server('proj') } }));
    await writeFile(path.join(dir, 'more.json'), JSON.stringify({ mcpServers: { more: server('more') } }));
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls: [{ name: proj__count, arguments: {} }, { name: more__count, arguments: { by: 2 } }]',
        '  - content: counted',
      ].join('\n'),
    );
    let stdout = '';
    let stderr = '';
    const code = await main(
      [
        'run',
        '--project',
        dir,
        '--scenario',
        scenario,
        '--mcp-config',
        path.join(dir, 'more.json'),
        '--json',
        'count',
      ],
      { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) },
    );
    expect(stderr).toMatch(/MCP servers from .*\.mcp\.json \(project\), .*more\.json: proj, more/);
    expect(code).toBe(0);
    const tools = (JSON.parse(stdout) as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(tools).toEqual([
      expect.stringMatching(/^count 1 from pid/),
      expect.stringMatching(/^count 2 from pid/),
    ]);
  }, 30_000);
});
