import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, repoRoot } from './support/build-dist.js';
import { type OAuthControl, startOAuthServer } from './support/mcp-remote-servers.mjs';
import { testServerFile } from './support/mcp-servers.js';
import { Tmux } from './support/tmux.js';

/**
 * `agentloop chat` in a real terminal (tmux) with a project .mcp.json holding a server that needs
 * sign-in: the header says which config it read, the sign-in link is printed whole, the chat goes on
 * with the other server, and once the test (playing the browser) has signed in, the remote server's
 * tools are in /tools and a call works. No browser is launched (AGENTLOOP_NO_BROWSER).
 */
const tmux = new Tmux('chat-mcp-signin');
let work: string;
let oauth: { url: string; control: OAuthControl; stop(): Promise<void> };

beforeAll(async () => {
  await buildDist();
  oauth = await startOAuthServer();
  await mkdir(path.join(repoRoot, 'test-artifacts'), { recursive: true });
  work = await mkdtemp(path.join(repoRoot, 'test-artifacts', 'chat-mcp-signin-'));
}, 180_000);

afterAll(async () => {
  tmux.killServer();
  await oauth?.stop();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

describe('chat with a server that needs sign-in', () => {
  it('prints the link, goes on with the other server, and offers the tools once signed in', async () => {
    await writeFile(
      path.join(work, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          remote: { url: oauth.url, approval: 'never' },
          local: { command: process.execPath, args: [testServerFile], approval: 'never' },
        },
      }),
    );
    await writeFile(
      path.join(work, 'scenario.yaml'),
      [
        'turns:',
        '  - toolCalls: [{ name: local__count, arguments: {} }]',
        '  - content: "Counted locally."',
        '  - toolCalls: [{ name: remote__echo, arguments: { text: "from the remote server" } }]',
        '  - content: "Echoed remotely."',
      ].join('\n'),
    );
    tmux.start('chat', ['chat', '--scenario', 'scenario.yaml', '--project', work, '--session', 'signin-1'], {
      cwd: work,
      columns: 120,
      env: { AGENTLOOP_NO_BROWSER: '1' },
    });
    let text = await tmux.waitFor('chat', /you ›/, 20_000);
    expect(text).toMatch(/MCP servers from \.mcp\.json \(project\): remote, local/);
    const link = /MCP server remote needs you to sign in: open (\S+)/.exec(text.replace(/\n/g, ''))?.[1];
    expect(link).toBeDefined();

    tmux.type('chat', 'count please');
    text = await tmux.waitFor('chat', /Counted locally\.[\s\S]*you ›\s*$/);

    // Half a command typed at the prompt when the browser comes back.
    tmux.run('send-keys', '-t', 'chat', '-l', '/too');
    await tmux.waitFor('chat', /you › \/too\s*$/);
    // The browser: the authorization page consents and sends it back to the chat's loopback listener.
    const consent = await fetch(link!, { redirect: 'manual' });
    expect((await fetch(consent.headers.get('location')!)).status).toBe(200);

    // The line lands above the prompt, never in the text being typed, which stays to be finished.
    text = await tmux.waitFor('chat', /MCP server remote: signed in, 2 tools/, 10_000);
    expect(text).toMatch(/^MCP server remote: signed in, 2 tools\nyou › \/too\s*$/m);
    expect(text).not.toMatch(/\/tooMCP/);
    tmux.type('chat', 'ls');
    text = await tmux.waitFor('chat', /MCP server remote \(ready, 2 tools\)[\s\S]*you ›\s*$/, 10_000);
    expect(text).toMatch(/remote__echo runs /);

    tmux.type('chat', 'echo remotely');
    text = await tmux.waitFor('chat', /Echoed remotely\.[\s\S]*you ›\s*$/);
    expect(text).toMatch(/remote__echo .*echo: from the remote server/);
    for (const token of oauth.control.issued) expect(text).not.toContain(token);
    tmux.type('chat', '/exit');
    await tmux.waitFor('chat', /\[exit 0\]/, 15_000);
  }, 90_000);
});
