/**
 * The CLI's event printer shows a tool's progress as one terse line per report: `agentloop run` with
 * the reference MCP server (server-everything, installed from the registry) whose long-running tool
 * sends progress notifications, through the real CLI code and the scripted model server.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { everythingStdio } from './support/mcp-servers.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

describe('agentloop run: tool progress', () => {
  it('prints each progress report of a running tool as a dim ↳ line between its start and end', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-progress-'));
    dirs.push(dir);
    await writeFile(
      path.join(dir, 'mcp.json'),
      JSON.stringify({ mcpServers: { everything: everythingStdio() } }),
    );
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls: [{ name: everything__trigger-long-running-operation, arguments: { duration: 0.3, steps: 3 } }]',
        '  - content: finished',
      ].join('\n'),
    );
    let stderr = '';
    const code = await main(
      ['run', '--project', dir, '--scenario', scenario, '--mcp-config', path.join(dir, 'mcp.json'), 'go'],
      { stdout: () => {}, stderr: (s) => (stderr += s) },
    );
    expect(code).toBe(0);
    const lines = stripVTControlCharacters(stderr).split('\n');
    const start = lines.findIndex((l) => l.startsWith('▶ everything__trigger-long-running-operation'));
    const end = lines.findIndex((l) => l.startsWith('✓ everything__trigger-long-running-operation'));
    const progress = lines.slice(start + 1, end);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(progress.slice(0, 2)).toEqual([
      '  ↳ everything__trigger-long-running-operation: 1/3',
      '  ↳ everything__trigger-long-running-operation: 2/3',
    ]);
  }, 30_000);
});
