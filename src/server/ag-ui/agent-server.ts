import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AgentRuntimeOptions, AgentSource } from '../agent-source.js';
import { isChatPagePath, serveChatPage } from '../chat-page.js';
import { applyCors } from '../cors.js';
import { HttpError, sendError } from '../http-error.js';
import { listenOn } from '../listen-on.js';
import { type AuthOption, checkExposure, principalOf } from '../request-auth.js';
import { readJsonBody } from '../request-body.js';
import { InboxWakeups } from '../run-cancel-inbox.js';
import type { SessionStore } from '../session-imports.js';
import type { ActiveRuns } from './active-runs.js';
import { handleCancel } from './cancel-endpoint.js';
import { handleEvents } from './events-endpoint.js';
import { handleMessages } from './messages-endpoint.js';
import { handleRun } from './run-endpoint.js';
import { parseRunInput } from './run-input.js';

/** The name the single `agent` is served under (`POST /agents/default/runs`). */
export const DEFAULT_AGENT_NAME = 'default';

/** What `createAgentServer` takes. */
export interface AgentServerOptions {
  /** The agent to serve (as `default`), or `agents` by name. */
  agent?: AgentSource;
  /** Agents by name: `POST /agents/<name>/runs`. */
  agents?: Record<string, AgentSource>;
  /** Where threads (sessions) live; every process serving one store sees the same threads. */
  store: SessionStore;
  /** Who may call; required for a host other than loopback. Without it, callers are `local`. */
  auth?: AuthOption;
  /** Origins allowed to call from a browser page (`*` for any); none by default. */
  cors?: readonly string[];
  /** `createAgent` options for every agent unless its source sets them (the model connection). */
  runtime?: AgentRuntimeOptions;
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Bytes that may wait for a client that does not read before its stream is cut (default 1 MiB). */
  maxBufferedBytes?: number;
  /** How often a reconnected stream reads the transcript of a run another process carries (default 200 ms). */
  pollMs?: number;
  /** Serve the chat page at `/` (chat-page/, docs/serve.md); off by default. */
  page?: boolean;
  /**
   * How long a thread's lease lasts unless renewed (default `DEFAULTS.leaseMs`): after the process
   * carrying a run dies, another takes the run over once it lapses (docs/serve.md, "Takeover").
   */
  leaseMs?: number;
  /**
   * How long an approval interrupt stays open: interrupts carry `expiresAt`, an answer after it is
   * refused (409 `interrupt_expired`) and a new message closes the expired calls. None by default.
   */
  approvalTimeoutMs?: number;
}

/** A Node request handler serving agents over AG-UI; `close()` waits for the runs it carries. */
export interface AgentRequestHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Cancels nothing: waits until every run this handler carries has ended and let its session go. */
  close(): Promise<void>;
}

const RUNS = /^\/agents\/([^/]+)\/runs\/?$/;
const EVENTS = /^\/agents\/([^/]+)\/threads\/([^/]+)\/events\/?$/;
const MESSAGES = /^\/agents\/([^/]+)\/threads\/([^/]+)\/messages\/?$/;
const CANCEL = /^\/agents\/([^/]+)\/threads\/([^/]+)\/runs\/([^/]+)\/cancel\/?$/;

/**
 * Serves agents to web apps over AG-UI (docs/serve.md): `POST /agents/<name>/runs` takes a
 * `RunAgentInput` and answers with the run's events (SSE, or protobuf when asked); `GET
 * /agents/<name>/threads/<id>/events` (with `Last-Event-ID`) reconnects to the thread's run; `POST
 * /agents/<name>/threads/<id>/runs/<runId>/cancel` stops a run. Usable with `http.createServer`,
 * Express, Fastify or Hono's node adapter. A run whose process died is taken over by the next
 * process a client reconnects to, and a cancel reaches the run from any of them (docs/serve.md).
 */
export function createAgentServer(options: AgentServerOptions): AgentRequestHandler {
  const agents = agentsOf(options);
  const active: ActiveRuns = new Map();
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const cors = options.cors ?? [];
  const pollMs = options.pollMs ?? 200;
  const wakeups = new InboxWakeups(options.store);
  const carry = { pollMs, wakeups };
  const contextOf = (source: AgentSource, principal: string) => ({
    store: options.store,
    source,
    runtime: options.runtime ?? {},
    principal,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: options.approvalTimeoutMs } : {}),
  });

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (applyCors(req, res, cors)) return;
    const url = new URL(req.url ?? '/', 'http://agentloop.invalid');
    if (options.page && (req.method === 'GET' || req.method === 'HEAD') && isChatPagePath(url.pathname)) {
      return serveChatPage(req, res, url.pathname);
    }
    const principal = await principalOf(req, options.auth);
    const runs = RUNS.exec(url.pathname);
    if (runs) {
      if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'runs are started with POST');
      const source = sourceNamed(agents, runs[1]!);
      const input = parseRunInput(await readJsonBody(req, maxBody));
      const cancelOnDisconnect = url.searchParams.get('cancelOnDisconnect') === 'true';
      await handleRun(req, res, input, contextOf(source, principal), active, {
        maxBuffered,
        cancelOnDisconnect,
        inbox: carry,
      });
      return;
    }
    const events = EVENTS.exec(url.pathname);
    if (events) {
      if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed', 'events are read with GET');
      const source = sourceNamed(agents, events[1]!);
      const threadId = decodeURIComponent(events[2]!);
      await handleEvents(req, res, threadId, {
        store: options.store,
        principal,
        active,
        maxBuffered,
        pollMs,
        takeover: { context: contextOf(source, principal), active, ...carry },
      });
      return;
    }
    const messages = MESSAGES.exec(url.pathname);
    if (messages) {
      if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed', 'messages are read with GET');
      sourceNamed(agents, messages[1]!);
      const threadId = decodeURIComponent(messages[2]!);
      await handleMessages(res, threadId, { store: options.store, principal });
      return;
    }
    const cancel = CANCEL.exec(url.pathname);
    if (cancel) {
      if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'a cancel is a POST');
      sourceNamed(agents, cancel[1]!);
      const [threadId, runId] = [decodeURIComponent(cancel[2]!), decodeURIComponent(cancel[3]!)];
      await handleCancel(res, threadId, runId, { store: options.store, principal, active });
      return;
    }
    throw new HttpError(404, 'not_found', 'no such endpoint');
  };

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    route(req, res).catch((error: unknown) => sendError(res, error));
  }) as AgentRequestHandler;
  handler.close = async () => {
    await Promise.all([...active.values()].map((run) => run.done));
    await wakeups.close();
  };
  return handler;
}

/** A started server: its URL, and `close()` (stops listening, waits for the runs). */
export interface StartedAgentServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * Listens on `host` (default 127.0.0.1) and `port` (default: one the OS picks). A host other than
 * loopback without `auth` is refused before anything listens.
 */
export async function startAgentServer(
  options: AgentServerOptions & { host?: string; port?: number },
): Promise<StartedAgentServer> {
  const host = options.host ?? '127.0.0.1';
  checkExposure(host, options.auth);
  const handler = createAgentServer(options);
  const listening = await listenOn(handler, { host, port: options.port ?? 0 });
  return {
    url: listening.url,
    server: listening.server,
    // Streams are cut at once (their clients reconnect, here or to another server); the runs go on
    // to rest. Waiting for the streams to end would wait for every open one.
    close: () =>
      listening.close(async () => {
        listening.server.closeAllConnections();
        await handler.close();
      }),
  };
}

function agentsOf(options: AgentServerOptions): Map<string, AgentSource> {
  const agents = new Map(Object.entries(options.agents ?? {}));
  if (options.agent) agents.set(DEFAULT_AGENT_NAME, options.agent);
  if (agents.size === 0) throw new Error('createAgentServer: give `agent` or `agents`');
  return agents;
}

function sourceNamed(agents: ReadonlyMap<string, AgentSource>, name: string): AgentSource {
  const source = agents.get(decodeURIComponent(name));
  if (!source)
    throw new HttpError(404, 'agent_not_found', `no agent named ${JSON.stringify(decodeURIComponent(name))}`);
  return source;
}
