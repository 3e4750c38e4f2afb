import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';

let dir = '';
beforeAll(async () => {
  await buildDist();
  dir = await mkdtemp(path.join(tmpdir(), 'a2a-serve-'));
}, 300_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe('agentloop serve --a2a, agentloop a2a card|send', () => {
  it('serves A2A beside AG-UI; a2a card prints the card, a2a send talks to the agent', async () => {
    const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
    const child = spawn(
      process.execPath,
      [
        cliPath,
        'serve',
        '--bundle',
        bundle,
        '--agent',
        'intake-facilitator',
        '--store',
        dir,
        '--port',
        '0',
        '--a2a',
      ],
      {
        cwd: dir,
        env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', OPENAI_MODEL: '', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (s: string) => resolve(s.trim().split('\n')[0]!));
        child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
      expect(stderr).toContain(`A2A: card at ${url}/.well-known/agent-card.json`);
      const card = await runCli(['a2a', 'card', url], { cwd: dir, timeoutMs: 30_000 });
      expect(card.code).toBe(0);
      const json = JSON.parse(card.stdout) as { name: string; supportedInterfaces: { url: string }[] };
      expect(json.supportedInterfaces[0]!.url).toBe(`${url}/a2a`);
      expect(json.name.length).toBeGreaterThan(0);
      const sent = await runCli(['a2a', 'send', url, 'hello'], { cwd: dir, timeoutMs: 30_000 });
      expect(sent.code).toBe(0);
      expect(sent.stderr).toMatch(
        /^task a2a-[0-9a-f-]+~[0-9a-f]+ \(context a2a-[0-9a-f-]+\): (completed|input-required)$/m,
      );
      // AG-UI still answers on the same port
      const agui = await fetch(`${url}/agents/default/runs`, { method: 'GET' });
      expect(agui.status).toBe(405);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 90_000);
});
