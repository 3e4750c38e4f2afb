import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, cliPath, repoRoot } from './support/build-dist.js';
import { buildChatPage } from './support/chat-page.js';
import { runCli } from './support/cli-process.js';

let dir = '';
beforeAll(async () => {
  await Promise.all([buildDist(), buildChatPage()]);
  dir = await mkdtemp(path.join(tmpdir(), 'agui-serve-'));
}, 300_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe('agentloop serve', () => {
  it('serves a bundle agent on the scripted model without an API key; Ctrl-C stops it with exit 0', async () => {
    const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
    const args = [
      'serve',
      '--bundle',
      bundle,
      '--agent',
      'intake-facilitator',
      '--store',
      dir,
      '--port',
      '0',
    ];
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: dir,
      env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', OPENAI_MODEL: '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (s: string) => resolve(s.trim().split('\n')[0]!));
      child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The chat page and its script (test/chat-page-browser.test.ts drives it in Chromium).
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>agentloop chat</title>');
    const script = await fetch(`${url}/chat.js`);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    const client = new HttpAgent({ url: `${url}/agents/default/runs`, threadId: 'cli-thread' });
    client.addMessage({ id: 'u1', role: 'user', content: 'hello' });
    const types: string[] = [];
    await client.runAgent({}, { onEvent: ({ event }) => void types.push(event.type) });
    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toMatch(/^RUN_(FINISHED|ERROR)$/);
    expect(client.messages.some((m) => m.role === 'assistant')).toBe(true);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('AG-UI endpoint');
  }, 60_000);

  it('refuses to listen beyond loopback without --token (exit 2)', async () => {
    const bundle = path.join(repoRoot, 'bundles', 'requirements-workflow');
    const result = await runCli(
      [
        'serve',
        '--bundle',
        bundle,
        '--agent',
        'intake-facilitator',
        '--store',
        dir,
        '--host',
        '0.0.0.0',
        '--port',
        '0',
      ],
      { cwd: dir },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('without auth');
  }, 60_000);
});
