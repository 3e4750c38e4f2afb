import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWorkerCommand } from '../src/cli/commands/worker-command.js';
import { createSessionClient, FileSessionStore } from '../src/index.js';
import { repoRoot } from './support/build-dist.js';
import { testDir } from './support/harness.js';
import { testServerFile } from './support/mcp-servers.js';

// `agentloop worker --mcp-config`: the sessions a worker carries reach the MCP servers the file names
// (a real stdio server, a real file store, a message posted as `agentloop send` posts it).
describe('agentloop worker --mcp-config', () => {
  it("carries a session whose agent calls an MCP server's tool", async () => {
    const dir = await testDir('agentloop-worker-mcp-');
    const config = path.join(dir, 'tools.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { counter: { command: process.execPath, args: [testServerFile], approval: 'never' } },
      }),
    );
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      [
        'turns:',
        '  - toolCalls: [{ name: counter__count, arguments: { by: 3 } }]',
        '  - content: counted',
      ].join('\n'),
    );
    const sessions = path.join(dir, 'sessions');
    const stop = new AbortController();
    let stderr = '';
    const io = {
      stdout: () => {},
      stderr: (text: string) => {
        stderr += text;
      },
    };
    const worker = runWorkerCommand(
      [
        '--store',
        sessions,
        '--project',
        dir,
        '--bundle',
        path.join(repoRoot, 'bundles', 'requirements-workflow'),
        '--agent',
        'intake-facilitator',
        '--scenario',
        scenario,
        '--mcp-config',
        config,
      ],
      io,
      stop.signal,
    );
    try {
      const client = createSessionClient({ store: new FileSessionStore({ dir: sessions }) });
      await client.send('w-1', 'count please');
      const record = await client.waitFor('w-1', { timeoutMs: 30_000 });
      expect(record.state).toBe('Completed');
      const store = new FileSessionStore({ dir: sessions });
      const { entries } = await store.readTranscript('w-1');
      const toolResult = entries.find((e) => e.kind === 'message' && e.message.role === 'tool');
      expect(toolResult && 'message' in toolResult ? String(toolResult.message.content) : '').toMatch(
        /^count 3/,
      );
      expect(stderr).toContain('MCP servers from');
      expect(stderr).toContain(': counter');
    } finally {
      stop.abort();
      expect(await worker).toBe(0);
    }
  }, 60_000);
});
