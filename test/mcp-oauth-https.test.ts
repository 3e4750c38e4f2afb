import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpAuthStore } from '../src/mcp/mcp-auth-store.js';
import { isSecureAuthUrl } from '../src/mcp/mcp-oauth-urls.js';
import { agentAt, serve, testDir } from './support/harness.js';
import { type OAuthControl, startOAuthServer } from './support/mcp-remote-servers.mjs';

// Remote MCP sign-in only ever sends its secrets to https authorization servers (http to this machine
// allowed), whatever a server's metadata or a project's auth folder says. The servers here listen on
// 127.0.0.1 and describe authorization servers elsewhere over http: each refusal names the URL, and
// nothing is sent there (no sign-in link, no registration, no token request).

interface Described {
  url: string;
  /** Every request it got, as `METHOD path`. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * An OAuth-protected MCP server that answers every MCP request 401 and describes its sign-in as
 * `describe` says: the resource metadata's authorization servers, the authorization server metadata.
 */
async function protectedServer(
  describe: (origin: string) => {
    authorizationServers: string[];
    metadata: Record<string, unknown>;
  },
): Promise<Described> {
  const seen: string[] = [];
  let origin = '';
  const server: Server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    const { authorizationServers, metadata } = describe(origin);
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
      return json({ resource: `${origin}/mcp`, authorization_servers: authorizationServers });
    if (req.url?.startsWith('/.well-known/oauth-authorization-server')) return json(metadata);
    if (req.url === '/mcp')
      return res
        .writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        })
        .end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const open: Described[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** An agent using the MCP server at `url`, with someone to sign in; what it reported. */
async function signInTo(url: string, authDir: string) {
  const model = await serve({ turns: [{ content: 'ok' }] });
  const signIns: URL[] = [];
  const errors: string[] = [];
  const agent = agentAt(model, {
    mcpServers: { remote: { url, type: 'http' } },
    mcpAuth: { dir: authDir, signIn: (_server, link) => signIns.push(link) },
  });
  agent.on('error', (e) => errors.push(e.message));
  await agent.ready();
  return { agent, signIns, errors };
}

describe('remote MCP sign-in refuses authorization servers without https', () => {
  it('an http authorization server off this machine, named by the resource metadata: refused naming it', async () => {
    const server = await protectedServer(() => ({
      authorizationServers: ['http://auth.example.test/'],
      metadata: {},
    }));
    open.push(server);
    const { agent, signIns, errors } = await signInTo(
      server.url,
      path.join(await testDir('oauth-http-'), 'auth'),
    );
    expect(signIns).toEqual([]);
    expect(errors.join('\n')).toMatch(
      /MCP server "remote": refusing to sign in through .*http:\/\/auth\.example\.test\/.*must use https/,
    );
    expect(agent.mcpServers[0]!.state).toBe('failed');
  });

  for (const [field, what] of [
    ['token_endpoint', 'the token endpoint'],
    ['registration_endpoint', 'the registration endpoint'],
    ['authorization_endpoint', 'the authorization endpoint'],
  ] as const)
    it(`a loopback authorization server whose ${field} is http off this machine: refused naming it`, async () => {
      const endpoint = `http://tokens.example.test/${field}`;
      const server = await protectedServer((origin) => ({
        authorizationServers: [origin],
        metadata: {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          registration_endpoint: `${origin}/register`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          [field]: endpoint,
        },
      }));
      open.push(server);
      const { signIns, errors } = await signInTo(server.url, path.join(await testDir('oauth-http-'), 'auth'));
      expect(signIns).toEqual([]);
      expect(errors.join('\n')).toContain(`refusing to sign in through ${what} ${endpoint}`);
      // Discovery only: no registration, no authorization, no token request reached any server.
      expect(server.seen.filter((r) => !/^GET \/\.well-known\/|^POST \/mcp$/.test(r))).toEqual([]);
    });

  it('metadata for another issuer than the server it came from is refused naming both', async () => {
    const server = await protectedServer((origin) => ({
      authorizationServers: [origin],
      metadata: {
        issuer: 'https://elsewhere.example.test',
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        response_types_supported: ['code'],
      },
    }));
    open.push(server);
    const { signIns, errors } = await signInTo(server.url, path.join(await testDir('oauth-issuer-'), 'auth'));
    expect(signIns).toEqual([]);
    expect(errors.join('\n')).toMatch(
      /sent metadata for another issuer \(https:\/\/elsewhere\.example\.test\)/,
    );
  });

  it('https and http to this machine pass; http elsewhere and other schemes do not', () => {
    for (const url of [
      'https://auth.example.com/token',
      'http://127.0.0.1:8080/',
      'http://localhost/x',
      'http://[::1]:9/',
    ])
      expect(isSecureAuthUrl(url), url).toBe(true);
    for (const url of [
      'http://auth.example.com/',
      'http://10.0.0.1/',
      'ftp://auth.example.com/',
      'javascript:alert(1)',
      'not a url',
    ])
      expect(isSecureAuthUrl(url), url).toBe(false);
  });
});

describe('sign-in state planted in a project auth folder', () => {
  let oauth: { url: string; origin: string; control: OAuthControl; stop(): Promise<void> };
  beforeAll(async () => {
    oauth = await startOAuthServer();
  });
  afterAll(() => oauth.stop());

  it("cached discovery naming another authorization server is not used: the server's own metadata is", async () => {
    // The attacker's "authorization server": it counts what reaches it.
    const attacker = await protectedServer((origin) => ({ authorizationServers: [origin], metadata: {} }));
    open.push(attacker);
    const evil = new URL(attacker.url).origin;
    const authDir = path.join(await testDir('oauth-planted-'), 'auth');
    const store = new McpAuthStore(authDir);
    await mkdir(authDir, { recursive: true });
    await writeFile(
      store.fileOf(oauth.url),
      JSON.stringify({
        url: oauth.url,
        discovery: {
          authorizationServerUrl: `${evil}/`,
          authorizationServerMetadata: {
            issuer: `${evil}/`,
            authorization_endpoint: `${evil}/authorize`,
            token_endpoint: `${evil}/token`,
            registration_endpoint: `${evil}/register`,
            response_types_supported: ['code'],
          },
        },
      }),
    );
    const { signIns } = await signInTo(oauth.url, authDir);
    expect(signIns).toHaveLength(1);
    expect(signIns[0]!.origin).toBe(oauth.origin);
    expect(attacker.seen).toEqual([]);
  });
});
