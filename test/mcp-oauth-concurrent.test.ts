import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../src/index.js';
import { agentAt, serve, testDir } from './support/harness.js';
import { type OAuthControl, startOAuthServer } from './support/mcp-remote-servers.mjs';
import { consent, toolTexts } from './support/mcp-servers.js';
import { waitUntil } from './support/wait-until.js';

// Two tool calls that both meet a 401 after the refresh failed start one sign-in, not two: one link
// is given, and that link (its state and PKCE verifier) is the one that works.

let oauth: { url: string; origin: string; control: OAuthControl; stop(): Promise<void> };
beforeAll(async () => {
  oauth = await startOAuthServer();
});
afterAll(() => oauth.stop());

const remote = (agent: Agent) => agent.mcpServers.find((s) => s.name === 'remote')!;

describe('concurrent 401s after a failed refresh', () => {
  it('give one sign-in link, and signing in through it brings the server back', async () => {
    const dir = await testDir('agentloop-oauth-concurrent-');
    const model = await serve({
      turns: [
        {
          toolCalls: [
            { name: 'remote__echo', arguments: { text: 'one' } },
            { name: 'remote__echo', arguments: { text: 'two' } },
            { name: 'remote__echo', arguments: { text: 'three' } },
          ],
        },
        { content: 'needs sign-in' },
        { toolCalls: [{ name: 'remote__echo', arguments: { text: 'signed in again' } }] },
        { content: 'done' },
      ],
    });
    const signIns: URL[] = [];
    const agent = agentAt(model, {
      mcpServers: { remote: { url: oauth.url, approval: 'never' } },
      mcpAuth: { dir: path.join(dir, 'auth'), signIn: (_server, url) => signIns.push(url) },
    });
    await agent.ready();
    await fetch(await consent(signIns[0]!));
    await waitUntil(() => remote(agent).state === 'ready', 'the sign-in');
    oauth.control.revokeRefreshTokens();
    oauth.control.expireAccessTokens();
    const result = await agent.send('echo three times');
    for (const text of toolTexts(result.messages))
      expect(text).toMatch(
        /^Error: MCP server "remote" needs you to sign in( again)?: open the link agentloop printed/,
      );
    expect(signIns).toHaveLength(2); // the first sign-in, and one for the three calls
    const back = await fetch(await consent(signIns[1]!));
    expect(back.status).toBe(200);
    await waitUntil(() => remote(agent).state === 'ready', 'the second sign-in');
    const again = await agent.send('echo again');
    expect(toolTexts(again.messages).at(-1)).toBe('echo: signed in again');
    expect(signIns).toHaveLength(2);
    await agent.close();
  }, 30_000);
});
