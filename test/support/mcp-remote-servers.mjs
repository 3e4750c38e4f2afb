// Remote MCP servers for the tests, on 127.0.0.1, written with the MCP SDK's server API: an SSE-only
// server (the older HTTP+SSE transport) and an OAuth-protected Streamable HTTP server with the SDK's
// server-side auth (metadata, dynamic registration, authorize, token, bearer check) over a small
// in-memory authorization server the test controls (token lifetime, revocation, counts).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { z } from 'zod';

/** A server with `echo`, and `whoami`, which answers with the bearer token it was sent (a hostile echo). */
function mcpServer(name) {
  const server = new McpServer({ name, version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echoes the text.',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  server.registerTool(
    'whoami',
    { description: 'Says which token called.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async (_args, extra) => ({
      content: [
        {
          type: 'text',
          text: `token ${extra.authInfo?.token ?? 'none'} for ${extra.authInfo?.clientId ?? '-'}`,
        },
      ],
    }),
  );
  return server;
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function stopper(server) {
  return () =>
    new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
}

/** An SSE-only server: GET /sse opens the stream, POST /messages carries requests; anything else 405. */
export async function startSseServer() {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      res.on('close', () => transports.delete(transport.sessionId));
      await mcpServer('sse-only').connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return res.writeHead(404).end('no such session');
      return transport.handlePostMessage(req, res);
    }
    res.writeHead(405, { allow: 'GET' }).end('method not allowed');
  });
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/sse`, stop: stopper(http) };
}

/**
 * An OAuth-protected Streamable HTTP MCP server at `/mcp` (with `sse: true`, an HTTP+SSE one at
 * `/sse`), its own authorization server on the same origin. `control` lets the test shorten token
 * lifetimes, revoke refresh tokens and count what happened.
 */
export async function startOAuthServer({ sse = false } = {}) {
  const control = {
    accessTokenSeconds: 3600,
    authorizations: 0,
    refreshes: 0,
    registrations: 0,
    /** Every access and refresh token issued. */
    issued: [],
    /** Refresh tokens that no longer work. */
    revokeRefreshTokens() {
      for (const t of refreshTokens.keys()) refreshTokens.delete(t);
    },
    /** Makes every access token expired. */
    expireAccessTokens() {
      for (const info of accessTokens.values()) info.expiresAt = Math.floor(Date.now() / 1000) - 1;
    },
  };
  const clients = new Map();
  const codes = new Map();
  const accessTokens = new Map();
  const refreshTokens = new Map();
  const issue = (clientId, resource) => {
    const access = `at-${randomBytes(24).toString('hex')}`;
    const refresh = `rt-${randomBytes(24).toString('hex')}`;
    accessTokens.set(access, {
      token: access,
      clientId,
      scopes: ['mcp'],
      expiresAt: Math.floor(Date.now() / 1000) + control.accessTokenSeconds,
      ...(resource ? { resource: new URL(resource) } : {}),
    });
    refreshTokens.set(refresh, { clientId, resource });
    control.issued.push(access, refresh);
    return {
      access_token: access,
      token_type: 'bearer',
      expires_in: control.accessTokenSeconds,
      refresh_token: refresh,
      scope: 'mcp',
    };
  };
  const provider = {
    clientsStore: {
      getClient: (id) => clients.get(id),
      registerClient: (client) => {
        control.registrations++;
        const full = {
          ...client,
          client_id: `client-${randomBytes(8).toString('hex')}`,
          client_id_issued_at: 0,
        };
        clients.set(full.client_id, full);
        return full;
      },
    },
    // The consent page: agrees at once and sends the browser back with a code.
    async authorize(client, params, res) {
      control.authorizations++;
      const code = `code-${randomBytes(16).toString('hex')}`;
      codes.set(code, { client, params });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      control.lastResource = params.resource?.href;
      res.redirect(302, target.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const entry = codes.get(code);
      if (!entry) throw new InvalidGrantError('unknown code');
      return entry.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code) {
      const entry = codes.get(code);
      if (!entry || entry.client.client_id !== client.client_id) throw new InvalidGrantError('bad code');
      codes.delete(code);
      return issue(client.client_id, entry.params.resource?.href);
    },
    async exchangeRefreshToken(client, refreshToken) {
      const entry = refreshTokens.get(refreshToken);
      if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('refresh token revoked');
      refreshTokens.delete(refreshToken);
      control.refreshes++;
      return issue(client.client_id, entry.resource);
    },
    async verifyAccessToken(token) {
      const info = accessTokens.get(token);
      if (!info) throw new InvalidTokenError('unknown token');
      return info;
    },
  };

  const app = express();
  const http = createServer(app);
  const port = await listen(http);
  const origin = `http://127.0.0.1:${port}`;
  const mcpUrl = new URL(sse ? '/sse' : '/mcp', origin);
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(origin),
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp'],
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  if (sse) {
    const streams = new Map();
    app.get('/sse', bearer, async (_req, res) => {
      const transport = new SSEServerTransport('/messages', res);
      streams.set(transport.sessionId, transport);
      res.on('close', () => streams.delete(transport.sessionId));
      await mcpServer('oauth-sse').connect(transport);
    });
    app.post('/messages', bearer, async (req, res) => {
      const transport = streams.get(String(req.query.sessionId ?? ''));
      if (!transport) return res.status(404).end('no such session');
      await transport.handlePostMessage(req, res);
    });
    app.all('/sse', (_req, res) => res.status(405).set('allow', 'GET').end());
    return { url: mcpUrl.href, origin, control, stop: stopper(http) };
  }
  app.post('/mcp', express.json(), bearer, async (req, res) => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = mcpServer('oauth-protected');
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.all('/mcp', (_req, res) => res.status(405).set('allow', 'POST').end());
  return { url: mcpUrl.href, origin, control, stop: stopper(http) };
}
