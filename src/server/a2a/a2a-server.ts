import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, AgentCard, formatSSEEvent, SSE_HEADERS } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  validateVersion,
} from '@a2a-js/sdk/server';
import type { AgentRuntimeOptions, AgentSource } from '../agent-source.js';
import { applyCors } from '../cors.js';
import { HttpError } from '../http-error.js';
import { listenOn } from '../listen-on.js';
import { type AuthOption, checkExposure, principalOf } from '../request-auth.js';
import { readJsonBody } from '../request-body.js';
import type { SessionStore } from '../session-imports.js';
import { A2A_RPC_PATH, agentCardFor, type CardInfo, legacyCardJson } from './agent-card.js';
import { type PushOptions, SessionTaskHandler } from './task-handler.js';

/** The well-known path of the agent card. */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** What `createA2aServer` takes. */
export interface A2aServerOptions {
  /** The agent to serve. */
  agent: AgentSource;
  /** Where contexts (sessions) and their tasks live; every process on one store serves the same tasks. */
  store: SessionStore;
  /** The server's public URL (the card's interface URL is `<url>/a2a`). */
  url: string;
  /** Who may call; required for a host other than loopback. Without it, callers are `local`. */
  auth?: AuthOption;
  /** Origins allowed to call from a browser page (`*` for any); none by default. */
  cors?: readonly string[];
  /** `createAgent` options for the agent unless its source sets them (the model connection). */
  runtime?: AgentRuntimeOptions;
  /** What the card says beyond the agent source (name, description, version, skills). */
  card?: CardInfo;
  /** Push notifications: the hosts their URLs may name. Off without it. */
  push?: PushOptions;
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** How often a subscriber reads the transcript of a task another process carries (default 200 ms). */
  pollMs?: number;
  /**
   * How long a task whose agent waits for an MCP server's sign-in rests `auth-required` in this
   * process, its sign-in open, before it fails (default 10 minutes).
   */
  signInTimeoutMs?: number;
}

/**
 * A Node request handler for A2A; `handles(req)` says whether a request is one of its paths (to
 * mount it beside another handler); `close()` waits for the tasks it carries.
 */
export interface A2aRequestHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  handles(req: IncomingMessage): boolean;
  /** The card as served (A2A 1.0). */
  readonly card: AgentCard;
  close(): Promise<void>;
}

/**
 * Serves an agent over A2A (docs/a2a.md): `GET /.well-known/agent-card.json` (1.0 with
 * `A2A-Version: 1.0`, else the 0.3 card), and JSON-RPC at `POST /a2a` with the 1.0 method names
 * (`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`,
 * push config operations, `GetExtendedAgentCard`) or, without the header or with `A2A-Version: 0.3`,
 * the 0.3 names (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`,
 * `tasks/pushNotificationConfig/*`, `agent/getAuthenticatedExtendedCard`). The SDK's JSON-RPC
 * transports read and answer the calls; `SessionTaskHandler` runs them on the sessions.
 */
export function createA2aServer(options: A2aServerOptions): A2aRequestHandler {
  const card = agentCardFor(options.agent, {
    url: options.url,
    auth: options.auth,
    push: options.push !== undefined,
    info: options.card,
  });
  const tasks = new SessionTaskHandler({
    card,
    store: options.store,
    source: options.agent,
    runtime: options.runtime ?? {},
    pollMs: options.pollMs ?? 200,
    signInTimeoutMs: options.signInTimeoutMs ?? 10 * 60_000,
    signInGraceMs: 3_000,
    ...(options.push ? { push: options.push } : {}),
  });
  const v1 = new JsonRpcTransportHandler(tasks);
  const v03 = new LegacyJsonRpcTransportHandler(tasks);
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const cors = options.cors ?? [];
  const v1Card = JSON.stringify(AgentCard.toJSON(card));
  const oldCard = JSON.stringify(legacyCardJson(card));

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (applyCors(req, res, cors)) return;
    const path = new URL(req.url ?? '/', 'http://agentloop.invalid').pathname;
    const version = headerOf(req, A2A_VERSION_HEADER);
    const legacy = version === undefined || version === '0.3';
    if (path === AGENT_CARD_PATH) {
      if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed', 'the card is read with GET');
      res.writeHead(200, {
        'content-type': 'application/json',
        'cache-control': 'no-cache',
        vary: A2A_VERSION_HEADER,
      });
      res.end(legacy ? oldCard : v1Card);
      return;
    }
    const rpcError = (status: number, code: number, message: string, id: unknown = null) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
    };
    if (req.method !== 'POST') return rpcError(405, A2A_ERROR_CODE.INVALID_REQUEST, 'A2A calls are POSTed');
    let principal: string;
    try {
      principal = await principalOf(req, options.auth);
    } catch (error) {
      const status = error instanceof HttpError ? error.status : 401;
      return rpcError(
        status,
        A2A_ERROR_CODE.INVALID_REQUEST,
        error instanceof Error ? error.message : 'refused',
      );
    }
    let body: unknown;
    try {
      body = await readJsonBody(req, maxBody);
    } catch (error) {
      const known = error instanceof HttpError ? error : undefined;
      if (known?.status === 413) return rpcError(413, A2A_ERROR_CODE.INVALID_REQUEST, known.message);
      return rpcError(200, A2A_ERROR_CODE.PARSE_ERROR, known?.message ?? 'the request body is not JSON');
    }
    const id = typeof body === 'object' && body !== null ? ((body as { id?: unknown }).id ?? null) : null;
    const call = body as { jsonrpc?: unknown; method?: unknown } | null;
    if (
      typeof call !== 'object' ||
      call === null ||
      Array.isArray(call) ||
      call.jsonrpc !== '2.0' ||
      typeof call.method !== 'string'
    ) {
      return rpcError(
        200,
        A2A_ERROR_CODE.INVALID_REQUEST,
        'the body is not a JSON-RPC 2.0 request (an object with jsonrpc "2.0", a method and an id); batches are not taken',
        id,
      );
    }
    const mapError = legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
      : JsonRpcTransportHandler.mapToJSONRPCError;
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: { isAuthenticated: options.auth !== undefined, userName: principal },
      headers: req.headers,
      ...(version ? { requestedVersion: version } : {}),
    });
    try {
      validateVersion(context.requestedVersion, card, 'JSONRPC');
    } catch (error) {
      const mapped = mapError(error);
      return rpcError(200, mapped.code, mapped.message, id);
    }
    const answer = await (legacy ? v03 : v1).handle(body as Record<string, unknown>, context);
    if (!isStream(answer)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
      return;
    }
    const iterator = answer[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (error) {
      const mapped = mapError(error);
      return rpcError(200, mapped.code, mapped.message, id);
    }
    res.writeHead(200, SSE_HEADERS);
    let gone = false;
    res.on('close', () => {
      gone = true;
      void iterator.return?.(undefined);
    });
    try {
      for (let next = first; !next.done && !gone; next = await iterator.next()) {
        res.write(formatSSEEvent(next.value));
      }
    } catch (error) {
      if (!gone) res.write(formatSSEEvent({ jsonrpc: '2.0', id, error: mapError(error) }));
    }
    res.end();
  };

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return void res.end();
      const message = error instanceof HttpError ? error.message : 'the server failed to handle the request';
      res.writeHead(error instanceof HttpError ? error.status : 500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: A2A_ERROR_CODE.INTERNAL_ERROR, message } }),
      );
    });
  }) as A2aRequestHandler;
  handler.handles = (req) => {
    const path = new URL(req.url ?? '/', 'http://agentloop.invalid').pathname;
    return path === AGENT_CARD_PATH || path === A2A_RPC_PATH;
  };
  Object.defineProperty(handler, 'card', { value: card });
  handler.close = async () => {
    for (const task of tasks.active.values()) task.abandon();
    await Promise.all([...tasks.active.values()].map((task) => task.done));
    await tasks.close();
  };
  return handler;
}

/** A started A2A server: its URL, and `close()` (stops listening, waits for the tasks). */
export interface StartedA2aServer {
  url: string;
  server: Server;
  handler: A2aRequestHandler;
  close(): Promise<void>;
}

/**
 * Listens on `host` (default 127.0.0.1) and `port` (default: one the OS picks) and serves the agent
 * over A2A, the card naming the URL it listens on unless `url` is given.
 */
export async function startA2aServer(
  options: Omit<A2aServerOptions, 'url'> & { url?: string; host?: string; port?: number },
): Promise<StartedA2aServer> {
  const host = options.host ?? '127.0.0.1';
  checkExposure(host, options.auth);
  let handler: A2aRequestHandler | undefined;
  const listening = await listenOn((req, res) => handler!(req, res), { host, port: options.port ?? 0 });
  const url = options.url ?? listening.url;
  const started = createA2aServer({ ...options, url });
  handler = started;
  return {
    url,
    server: listening.server,
    handler: started,
    close: () => listening.close(() => started.close()),
  };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  const text = Array.isArray(value) ? value[0] : value;
  return text && text.trim() !== '' ? text.trim() : undefined;
}

function isStream(value: unknown): value is AsyncGenerator<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === 'function';
}
