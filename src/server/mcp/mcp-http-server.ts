import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { HttpError } from '../http-error.js';
import { listenOn } from '../listen-on.js';
import { type AuthOption, checkExposure, principalOf } from '../request-auth.js';
import { readJsonBody } from '../request-body.js';
import { MemorySessionStore } from '../session-imports.js';
import { createMcpServer, type McpAgentServerOptions } from './mcp-agent-server.js';
import { RunningSessions } from './running-sessions.js';

/** What `createMcpHttpHandler` takes: the agents (as for `createMcpServer`), who may call, the body limit. */
export interface McpHttpServerOptions extends Omit<McpAgentServerOptions, 'principal'> {
  /** Who may call; required for a host other than loopback. Without it, callers are `local`. */
  auth?: AuthOption;
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** The path the MCP endpoint answers on (default `/mcp`). */
  path?: string;
  /**
   * An MCP session with no request for this long (and none under way) is closed (default 30 min);
   * its id then gets 404, as the MCP spec has it for an ended session, and the client initializes again.
   */
  sessionIdleMs?: number;
  /**
   * The most MCP sessions open at once (default 100): an `initialize` beyond it closes the session
   * idle the longest, or is refused (503) when every one has a request under way.
   */
  maxSessions?: number;
}

/** A Node request handler serving agents over MCP's Streamable HTTP; `close()` ends its MCP sessions. */
export interface McpRequestHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Closes every MCP session (their turns run on to rest and are saved), then resolves. */
  close(): Promise<void>;
  /** How many MCP sessions are open. */
  readonly openSessions: number;
}

/** One client's MCP session: its transport, its server, and the principal that opened it. */
interface ClientSession {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  principal: string;
  /** POSTs under way (a running call keeps its session open however long its turn takes). */
  busy: number;
  /** When its last POST started or ended (ms). */
  lastUsed: number;
}

const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_SESSIONS = 100;

/**
 * Serves agents over MCP's Streamable HTTP (docs/mcp-server.md) at `/mcp`: a client's `initialize`
 * opens an MCP session (the `Mcp-Session-Id` header) with its own server, owned by the caller's
 * principal; later requests must carry the session and come from the same principal. Auth and the
 * loopback rule are `agentloop serve`'s; bodies over `maxBodyBytes` are refused as they arrive.
 */
export function createMcpHttpHandler(options: McpHttpServerOptions): McpRequestHandler {
  const sessions = new Map<string, ClientSession>();
  const running = new RunningSessions();
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const endpoint = options.path ?? '/mcp';
  // One store for every client session (the default is in memory: created once, not per client).
  const shared = { ...options, store: options.store ?? new MemorySessionStore() };
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const end = (id: string, session: ClientSession) => {
    if (sessions.get(id) === session) sessions.delete(id);
    void session.server.close().catch(() => {});
  };
  const sweep = () => {
    const now = Date.now();
    for (const [id, session] of sessions) {
      if (session.busy === 0 && now - session.lastUsed >= idleMs) end(id, session);
    }
  };
  const sweeper = setInterval(sweep, Math.max(10, Math.min(idleMs / 2, 60_000)));
  sweeper.unref();
  /** Room for one more session: the one idle the longest is closed, or 503 when all are busy. */
  const makeRoom = () => {
    sweep();
    if (sessions.size < maxSessions) return;
    let oldest: [string, ClientSession] | undefined;
    for (const entry of sessions) {
      if (entry[1].busy === 0 && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
    }
    if (!oldest) {
      throw new HttpError(
        503,
        'too_many_sessions',
        `${sessions.size} MCP sessions are open and busy (the limit is ${maxSessions}); try again later`,
      );
    }
    end(...oldest);
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://agentloop.invalid');
    if (url.pathname !== endpoint) throw new HttpError(404, 'not_found', `the MCP endpoint is ${endpoint}`);
    const principal = await principalOf(req, options.auth);
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      throw new HttpError(405, 'method_not_allowed', 'the MCP endpoint takes POST, GET and DELETE');
    }
    const body = req.method === 'POST' ? await readJsonBody(req, maxBody) : undefined;
    if (id !== undefined) {
      const session = sessions.get(id);
      if (!session) throw new HttpError(404, 'session_not_found', `no MCP session "${id}": initialize again`);
      if (session.principal !== principal) {
        throw new HttpError(403, 'session_forbidden', `MCP session "${id}" belongs to another caller`);
      }
      session.lastUsed = Date.now();
      if (req.method === 'POST') {
        // Busy until the answer (or its stream) is over: a long turn does not make its session idle.
        session.busy++;
        res.once('close', () => {
          session.busy--;
          session.lastUsed = Date.now();
        });
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      throw new HttpError(
        400,
        'no_session',
        'no Mcp-Session-Id header: a client starts with an initialize request',
      );
    }
    makeRoom();
    const server = createMcpServer({ ...shared, principal }, running);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server, principal, busy: 0, lastUsed: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error: unknown) => sendJsonRpcError(res, error));
  }) as McpRequestHandler;
  Object.defineProperty(handler, 'openSessions', { get: () => sessions.size });
  handler.close = async () => {
    clearInterval(sweeper);
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((s) => s.server.close().catch(() => {})));
    await running.idle();
  };
  return handler;
}

/** A started MCP server: its endpoint URL, and `close()`. */
export interface StartedMcpHttpServer {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * Listens on `host` (default 127.0.0.1) and `port` (default: one the OS picks) with
 * `createMcpHttpHandler`. A host other than loopback without `auth` is refused before anything listens.
 */
export async function startMcpHttpServer(
  options: McpHttpServerOptions & { host?: string; port?: number },
): Promise<StartedMcpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  checkExposure(host, options.auth);
  const handler = createMcpHttpHandler(options);
  const listening = await listenOn(handler, { host, port: options.port ?? 0 });
  return {
    url: `${listening.url}${options.path ?? '/mcp'}`,
    server: listening.server,
    close: () => listening.close(() => handler.close()),
  };
}

/** JSON-RPC error codes for refusals before the MCP SDK sees a request (as its own transport uses them). */
const JSON_RPC_CODES: Record<string, number> = {
  bad_input: -32700,
  body_too_large: -32600,
  no_session: -32600,
  session_not_found: -32001,
  too_many_sessions: -32000,
};

/** Writes a refusal as a JSON-RPC error (`id: null`) with the HTTP status; anything unknown is a bare 500. */
function sendJsonRpcError(res: ServerResponse, error: unknown): void {
  const known = error instanceof HttpError;
  const status = known ? error.status : 500;
  const message = known ? error.message : 'the server failed to handle the request';
  const code = known ? (JSON_RPC_CODES[error.code] ?? -32000) : -32603;
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code, message, data: known ? { reason: error.code } : undefined },
    }),
  );
}
