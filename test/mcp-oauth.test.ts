import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent, AgentOptions } from '../src/index.js';
import { FileSessionStore } from '../src/index.js';
import { McpAuthStore } from '../src/mcp/mcp-auth-store.js';
import type { Scenario } from '../src/testing/index.js';
import { agentAt, serve, testDir } from './support/harness.js';
import { type OAuthControl, startOAuthServer } from './support/mcp-remote-servers.mjs';
import { consent, testServer, toolTexts } from './support/mcp-servers.js';
import { waitUntil } from './support/wait-until.js';

// Signing in to a remote MCP server with OAuth, through the MCP SDK's client auth and agentloop's
// provider, against an OAuth-protected server the test starts (the SDK's server-side auth). The test
// plays the browser: it GETs the authorization URL (the server consents at once and redirects) and
// follows the redirect to agentloop's loopback listener.

let oauth: { url: string; origin: string; control: OAuthControl; stop(): Promise<void> };
beforeAll(async () => {
  oauth = await startOAuthServer();
});
afterAll(() => oauth.stop());

/** Everything an agent lets out: events, debug lines, inspection events, transcript lines, errors. */
interface Outputs {
  events: string[];
  debug: string[];
  inspection: string[];
  errors: string[];
}

async function signingAgent(scenario: Scenario, dir: string, more: Partial<AgentOptions> = {}) {
  const server = await serve(scenario);
  const signIns: URL[] = [];
  const out: Outputs = { events: [], debug: [], inspection: [], errors: [] };
  const agent = agentAt(server, {
    mcpServers: { remote: { url: oauth.url, approval: 'never' } },
    mcpAuth: { dir: path.join(dir, 'auth'), signIn: (_server, url) => signIns.push(url) },
    store: new FileSessionStore({ dir: path.join(dir, 'sessions') }),
    session: `s-${Math.random().toString(36).slice(2)}`,
    debug: (line) => out.debug.push(line),
    inspect: (event) => out.inspection.push(safeJson(event)),
    ...more,
  });
  agent.on('*', (event) => out.events.push(JSON.stringify(event)));
  agent.on('error', (event) => out.errors.push(event.message));
  return { agent, signIns, out };
}

function safeJson(value: unknown): string {
  const seen = new WeakSet();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return undefined;
      seen.add(v);
    }
    return typeof v === 'function' ? undefined : v;
  });
}

const remote = (agent: Agent) => agent.mcpServers.find((s) => s.name === 'remote')!;

/** Every file under `dir`, as text. */
async function filesUnder(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const texts: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    if ((await stat(file)).isFile()) texts.push(await readFile(file, 'utf8'));
  }
  return texts;
}

/** Fails naming the place when any token the server issued appears in `texts`. */
function expectNoToken(where: string, texts: readonly string[]): void {
  const all = texts.join('\n');
  for (const token of oauth.control.issued) {
    if (all.includes(token)) throw new Error(`a token appears in ${where}`);
  }
}

const whoamiThenEcho: Scenario = {
  turns: [
    { toolCalls: [{ name: 'remote__whoami', arguments: {} }] },
    { toolCalls: [{ name: 'remote__echo', arguments: { text: 'signed in' } }] },
    { content: 'done' },
  ],
};

describe('OAuth sign-in to a remote MCP server', () => {
  it('signs in on first use (state checked, PKCE, resource), lists the tools, calls them, keeps the token out of everything', async () => {
    const dir = await testDir('agentloop-oauth-');
    const { control } = oauth;
    const before = { authorizations: control.authorizations, registrations: control.registrations };
    const { agent, signIns, out } = await signingAgent(whoamiThenEcho, dir);
    await agent.ready();
    expect(remote(agent)).toEqual({ name: 'remote', state: 'signin', tools: [] });
    expect(signIns).toHaveLength(1);
    const authorizationUrl = signIns[0]!;
    expect(authorizationUrl.origin).toBe(oauth.origin);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(oauth.url);
    expect(authorizationUrl.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const redirectUri = new URL(authorizationUrl.searchParams.get('redirect_uri')!);
    expect(redirectUri.hostname).toBe('127.0.0.1');
    expect(Number(redirectUri.port)).toBeGreaterThan(0);

    const back = await consent(authorizationUrl);
    expect(back.origin).toBe(redirectUri.origin);
    // A redirect with another state is refused, and the sign-in still waits for the right one.
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state');
    expect((await fetch(forged)).status).toBe(400);
    expect(remote(agent).state).toBe('signin');

    expect((await fetch(back)).status).toBe(200);
    await waitUntil(() => remote(agent).state === 'ready', 'the server to be ready after sign-in');
    expect(remote(agent).tools).toEqual(['remote__echo', 'remote__whoami']);
    expect(control.authorizations - before.authorizations).toBe(1);
    expect(control.registrations - before.registrations).toBe(1);
    // The listener is gone once the sign-in is done.
    await expect(fetch(back)).rejects.toThrow();

    const result = await agent.send('who am I?');
    const [whoami, echo] = toolTexts(result.messages);
    // The server echoed the bearer token back: it reaches nobody.
    expect(whoami).toMatch(/^token \[REDACTED\] for client-/);
    expect(echo).toBe('echo: signed in');

    const store = new McpAuthStore(path.join(dir, 'auth'));
    const file = store.fileOf(oauth.url);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const saved = await store.read(oauth.url);
    expect(control.issued).toContain(saved!.tokens!.access_token);
    // The agent's redactor learned both tokens (what a server's error body or a tool might repeat).
    const { access_token, refresh_token } = saved!.tokens!;
    expect(agent.redactor.redact(`a ${access_token} b ${refresh_token}`)).toBe('a [REDACTED] b [REDACTED]');
    await agent.close();

    expect(out.errors).toEqual([]);
    expectNoToken('an event', out.events);
    expectNoToken('a debug line', out.debug);
    expectNoToken('an inspection event', out.inspection);
    expectNoToken('the sessions folder (transcript, snapshot)', await filesUnder(path.join(dir, 'sessions')));
    expect(out.debug.length).toBeGreaterThan(0);
    expect(out.inspection.length).toBeGreaterThan(0);
  }, 30_000);

  it('a second agent with the same auth folder uses the stored token; an expired one is refreshed', async () => {
    const dir = await testDir('agentloop-oauth-reuse-');
    const first = await signingAgent({ turns: [{ content: 'x' }] }, dir);
    await first.agent.ready();
    await fetch(await consent(first.signIns[0]!));
    await waitUntil(() => remote(first.agent).state === 'ready', 'the first sign-in');
    await first.agent.close();
    const { control } = oauth;
    const authorizations = control.authorizations;

    // Fresh memory, same folder: no sign-in. The server then says the token expired: refreshed on the 401.
    const second = await signingAgent(whoamiThenEcho, dir);
    await second.agent.ready();
    expect(remote(second.agent).state).toBe('ready');
    expect(second.signIns).toEqual([]);
    const refreshes = control.refreshes;
    control.expireAccessTokens();
    const result = await second.agent.send('again');
    expect(toolTexts(result.messages)).toEqual([
      expect.stringMatching(/^token \[REDACTED\]/),
      'echo: signed in',
    ]);
    expect(control.refreshes).toBe(refreshes + 1);
    expect(control.authorizations).toBe(authorizations);
    expect(second.out.errors).toEqual([]);
    await second.agent.close();

    // A token that expires within a minute is refreshed before it is sent (no 401 needed).
    const store = new McpAuthStore(path.join(dir, 'auth'));
    await store.update(oauth.url, (r) => ({
      ...r,
      tokens: { ...r.tokens!, expires_at: Date.now() + 20_000 },
    }));
    const third = await signingAgent({ turns: [{ content: 'x' }] }, dir);
    await third.agent.ready();
    expect(control.refreshes).toBe(refreshes + 2);
    expect(remote(third.agent).state).toBe('ready');
    expect((await store.read(oauth.url))!.tokens!.expires_at).toBeGreaterThan(Date.now() + 3_000_000);
    expectNoToken('an event', [...second.out.events, ...third.out.events]);
    await third.agent.close();
  }, 30_000);

  it('a revoked refresh token leads to a new sign-in request, not a crash', async () => {
    const dir = await testDir('agentloop-oauth-revoked-');
    const { agent, signIns, out } = await signingAgent(
      {
        turns: [
          { toolCalls: [{ name: 'remote__echo', arguments: { text: 'after revocation' } }] },
          { content: 'needs sign-in' },
          { toolCalls: [{ name: 'remote__echo', arguments: { text: 'signed in again' } }] },
          { content: 'done' },
        ],
      },
      dir,
    );
    await agent.ready();
    await fetch(await consent(signIns[0]!));
    await waitUntil(() => remote(agent).state === 'ready', 'the sign-in');
    oauth.control.revokeRefreshTokens();
    oauth.control.expireAccessTokens();
    const result = await agent.send('echo');
    expect(toolTexts(result.messages)[0]).toBe(
      'Error: MCP server "remote" needs you to sign in again: open the link agentloop printed',
    );
    expect(result.terminateReason).toBe('completed');
    expect(signIns).toHaveLength(2);
    expect(remote(agent).state).toBe('signin');
    await fetch(await consent(signIns[1]!));
    await waitUntil(() => remote(agent).state === 'ready', 'the second sign-in');
    const again = await agent.send('echo again');
    expect(toolTexts(again.messages).at(-1)).toBe('echo: signed in again');
    expect(out.errors).toEqual([]);
    await agent.close();
    expectNoToken('an event', out.events);
    expectNoToken('a debug line', out.debug);
    expectNoToken('an inspection event', out.inspection);
    expectNoToken('a tool result', [...toolTexts(result.messages), ...toolTexts(again.messages)]);
    expectNoToken('the sessions folder', await filesUnder(path.join(dir, 'sessions')));
  }, 30_000);

  it('without anyone to sign in, the server is one error event naming `agentloop mcp login`; the others run', async () => {
    const dir = await testDir('agentloop-oauth-headless-');
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'local__count', arguments: {} }] }, { content: 'counted' }],
    });
    const agent = agentAt(server, {
      mcpServers: { remote: { url: oauth.url }, local: testServer('') },
      mcpAuth: { dir: path.join(dir, 'auth') },
    });
    const errors: { message: string; code?: string }[] = [];
    agent.on('error', (e) => errors.push({ message: e.message, code: (e as { code?: string }).code }));
    await agent.ready();
    expect(errors).toEqual([
      {
        message: 'MCP server "remote" needs you to sign in: run `agentloop mcp login remote`',
        code: 'mcp_server',
      },
    ]);
    expect(agent.mcpServers.map((s) => [s.name, s.state])).toEqual([
      ['remote', 'failed'],
      ['local', 'ready'],
    ]);
    const result = await agent.send('count');
    expect(toolTexts(result.messages)[0]).toMatch(/^count 1 from pid/);
    // No client was registered and no token stored for a sign-in nobody could do.
    const record = await new McpAuthStore(path.join(dir, 'auth')).read(oauth.url);
    expect(record?.client).toBeUndefined();
    expect(record?.tokens).toBeUndefined();
    await agent.close();
  }, 30_000);
});

describe('OAuth sign-in over the HTTP+SSE transport', () => {
  it('signs in the same way, with "type": "sse" and through the fallback', async () => {
    const sseServer = await startOAuthServer({ sse: true });
    try {
      for (const type of ['sse', undefined] as const) {
        const dir = await testDir('agentloop-oauth-sse-');
        const server = await serve({
          turns: [
            { toolCalls: [{ name: 'old__echo', arguments: { text: 'over sse' } }] },
            { content: 'done' },
          ],
        });
        const signIns: URL[] = [];
        const agent = agentAt(server, {
          mcpServers: { old: { url: sseServer.url, approval: 'never', ...(type ? { type } : {}) } },
          mcpAuth: { dir, signIn: (_server, url) => signIns.push(url) },
        });
        await agent.ready();
        expect(agent.mcpServers[0]!.state).toBe('signin');
        await fetch(await consent(signIns[0]!));
        await waitUntil(() => agent.mcpServers[0]!.state === 'ready', `the sign-in (type ${type})`);
        expect(agent.mcpServers[0]!.transport).toBe('sse');
        const result = await agent.send('echo');
        expect(toolTexts(result.messages)).toEqual(['echo: over sse']);
        await agent.close();
      }
    } finally {
      await sseServer.stop();
    }
  }, 30_000);
});

describe("an embedder's own OAuth provider", () => {
  it('is used for its server instead of the stored one', async () => {
    const dir = await testDir('agentloop-oauth-own-');
    const sentTo: URL[] = [];
    let verifier = '';
    let client: OAuthClientInformationMixed | undefined;
    const own = {
      redirectUrl: 'http://127.0.0.1:9/own-callback',
      clientMetadata: { client_name: 'embedder', redirect_uris: ['http://127.0.0.1:9/own-callback'] },
      clientInformation: () => client,
      saveClientInformation: (info: OAuthClientInformationMixed) => {
        client = info;
      },
      tokens: () => undefined,
      saveTokens: () => {},
      redirectToAuthorization: (url: URL) => {
        sentTo.push(url);
      },
      saveCodeVerifier: (v: string) => {
        verifier = v;
      },
      codeVerifier: () => verifier,
    } satisfies OAuthClientProvider;
    const signIns: URL[] = [];
    const server = await serve({ turns: [{ content: 'x' }] });
    const agent = agentAt(server, {
      mcpServers: { remote: { url: oauth.url } },
      mcpAuth: { dir, signIn: (_s, url) => signIns.push(url), providers: { remote: own } },
    });
    const errors: string[] = [];
    agent.on('error', (e) => errors.push(e.message));
    await agent.ready();
    expect(sentTo).toHaveLength(1);
    expect(sentTo[0]!.searchParams.get('redirect_uri')).toBe('http://127.0.0.1:9/own-callback');
    expect(signIns).toEqual([]);
    // agentloop does not wait for a redirect it did not set up: the server failed, reported once.
    expect(errors).toEqual([expect.stringMatching(/^MCP server "remote" failed to start: /)]);
    await agent.close();
  }, 30_000);
});
