import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { buildDist } from './support/build-dist.js';
import { runCli } from './support/cli-process.js';
import { testDir } from './support/harness.js';
import { type OAuthControl, startOAuthServer } from './support/mcp-remote-servers.mjs';
import { testServerFile } from './support/mcp-servers.js';
import { waitUntil } from './support/wait-until.js';

// `agentloop mcp login|list|logout` and `run` with a server that needs sign-in, on the project's
// .mcp.json, against the OAuth-protected server the test starts. The test plays the browser.

process.env.AGENTLOOP_NO_BROWSER = '1';
let oauth: { url: string; origin: string; control: OAuthControl; stop(): Promise<void> };
beforeAll(async () => {
  oauth = await startOAuthServer();
  await buildDist();
}, 120_000);
afterAll(() => oauth.stop());

async function cli(args: string[], onStderr: (text: string) => void = () => {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (s) => (stdout += s),
    stderr: (s) => {
      stderr += s;
      onStderr(s);
    },
  });
  return { code, stdout, stderr };
}

describe('agentloop mcp', () => {
  it('login prints the link and signs in; a second process lists the server signed in; logout forgets it; run reports the login to do', async () => {
    const dir = await testDir('agentloop-mcp-cli-');
    await writeFile(
      path.join(dir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          remote: { url: oauth.url },
          local: { command: process.execPath, args: [testServerFile], approval: 'never' },
        },
      }),
    );
    const project = ['--project', dir];

    let link: URL | undefined;
    const login = cli(['mcp', 'login', 'remote', ...project], (text) => {
      const found = /needs you to sign in: open (\S+)/.exec(text)?.[1];
      if (found) link = new URL(found);
    });
    await waitUntil(() => link !== undefined, 'the sign-in link');
    const consent = await fetch(link!, { redirect: 'manual' });
    expect((await fetch(consent.headers.get('location')!)).status).toBe(200);
    const done = await login;
    expect(done).toMatchObject({ code: 0, stdout: 'signed in to remote (2 tools)\n' });
    for (const token of oauth.control.issued) expect(done.stdout + done.stderr).not.toContain(token);

    // Another process, the same project: signed in without a new sign-in.
    const authorizations = oauth.control.authorizations;
    const listed = await runCli(['mcp', 'list', ...project], {
      cwd: dir,
      env: { AGENTLOOP_NO_BROWSER: '1' },
    });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      'remote  streamable-http  signed in  ready, 2 tools\nlocal  stdio  none  ready, 6 tools\n',
    );
    expect(oauth.control.authorizations).toBe(authorizations);

    expect((await cli(['mcp', 'logout', 'remote', ...project])).stdout).toBe('signed out of remote\n');
    const after = await cli(['mcp', 'list', ...project]);
    expect(after.stdout).toMatch(
      /^remote {2}http \(or sse\) {2}not signed in {2}failed, 0 tools\n {2}MCP server "remote" needs you to sign in: run `agentloop mcp login remote`\n/,
    );

    const json = JSON.parse((await cli(['mcp', 'list', '--json', ...project])).stdout);
    expect(json).toEqual([
      expect.objectContaining({ name: 'remote', signIn: 'not signed in', state: 'failed', tools: 0 }),
      { name: 'local', transport: 'stdio', signIn: 'none', state: 'ready', tools: 6 },
    ]);

    // run has no one to sign in: it says what to do, and the other server works.
    const scenario = path.join(dir, 'scenario.yaml');
    await writeFile(
      scenario,
      'turns:\n  - toolCalls: [{ name: local__count, arguments: {} }]\n  - content: counted\n',
    );
    const run = await cli(['run', ...project, '--scenario', scenario, '--json', 'count']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/MCP server "remote" needs you to sign in: run `agentloop mcp login remote`/);
    expect(run.stderr.match(/needs you to sign in/g)).toHaveLength(1);
    expect(JSON.parse(run.stdout).response).toBe('counted');
  }, 60_000);
});
