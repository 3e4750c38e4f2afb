import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import type { AnyStateMachine, InspectionEvent, Observer } from 'xstate';
import type { Agent } from '../agent/agent.js';
import { agentMachine } from '../machines/agent-machine.js';
import type { AgentEvent } from '../machines/emitted-events.js';
import { machineChart } from './machine-graph.js';
import type {
  BatchItem,
  BusEvent,
  ChartDefinition,
  ClientMessage,
  InspectionRecord,
  ServerMessage,
  SessionInfo,
  SessionStatus,
  SessionSync,
} from './protocol.js';
import {
  createSanitizer,
  defaultSecrets,
  isTokenChunkEvent,
  type Sanitizer,
  sanitizeAgentContext,
} from './sanitize.js';
import { type SnapshotLike, statusOf, topState } from './session-view.js';

/** The page's files: `inspector/public` at the package root (two levels above src/inspector and dist/inspector). */
export const INSPECTOR_PUBLIC_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'inspector',
  'public',
);

/** Options of {@link startInspectorServer}. */
export interface InspectorServerOptions {
  /** Port on 127.0.0.1 (default 0: any free port). */
  port?: number;
  /** Default `127.0.0.1`; the server is meant for this machine only. */
  host?: string;
  /** Strings never sent to the page, besides each agent's API key and `OPENAI_API_KEY`. */
  secrets?: readonly string[];
  /** How long events are gathered before they are sent together (default 50 ms). */
  flushMs?: number;
  /** Longer strings are cut before they are sent (default 8000). */
  maxStringChars?: number;
  /** Bus events kept per session for pages that connect later (default 2000; token chunks are not kept). */
  historyLimit?: number;
  /** Where the page's files are (default {@link INSPECTOR_PUBLIC_DIR}). */
  publicDir?: string;
  /** The machine drawn on the page (default `agentMachine`). */
  machine?: AnyStateMachine;
}

/** A session read from disk (see `agentloop inspect`): shown, never driven. */
export interface SavedSessionView {
  info: Omit<SessionInfo, 'live' | 'source'>;
  status: SessionStatus;
  messages: unknown[];
  events: BusEvent[];
}

/** A running local inspector. */
export interface InspectorServer {
  /** The page, e.g. `http://127.0.0.1:4777/`. */
  readonly url: string;
  readonly port: number;
  /**
   * The XState inspection observer: give it to `createAgent({ inspect: server.inspect })`, then
   * `attach` the agent. With no page open it returns at once.
   */
  readonly inspect: Observer<InspectionEvent>;
  /** Shows an agent: its statechart, events, transcript and approvals. Returns a function that detaches it. */
  attach(agent: Agent<unknown>, options?: { name?: string; parentId?: string; title?: string }): () => void;
  /** Adds (or replaces) a saved session. */
  showSaved(view: SavedSessionView): void;
  /** Pages connected now. */
  readonly clientCount: number;
  /** Resolves when a page is connected (at once if one is). */
  waitForClient(): Promise<void>;
  close(): Promise<void>;
}

interface LiveSession {
  kind: 'live';
  id: string;
  name: string;
  parentId: string | undefined;
  title: string | undefined;
  agent: Agent<unknown>;
  /** The actor's system id, which inspection events name as their `rootId` (known once the actor exists). */
  rootActorId: string | undefined;
  attached: boolean;
  /** Sanitizer with this agent's secrets. */
  sanitize: Sanitizer;
  /** The same for inspection events: conversations in them become counts (the transcript channel carries them). */
  sanitizeEvent: Sanitizer;
  history: AgentEvent[];
  /** Token chunks gathered since the last flush. */
  stream: string;
  /** Messages sent to the pages so far (by batches). */
  sentMessages: number;
  dirty: boolean;
  off: () => void;
}

interface SavedSession {
  kind: 'saved';
  id: string;
  view: SavedSessionView;
}

type Session = LiveSession | SavedSession;

interface Client {
  ws: WebSocket;
  /** Queue items with a lower sequence number happened before this page's sync: skipped. */
  fromSeq: number;
}

interface Queued {
  seq: number;
  session: LiveSession;
  item: { k: 'inspect'; event: InspectionEvent; at: number } | { k: 'bus'; event: AgentEvent };
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
  '.json': 'application/json',
  '.png': 'image/png',
};

/**
 * Starts the local inspector: an HTTP server for the page (`inspector/public`) and a WebSocket at
 * `/ws` carrying sanitized XState inspection events and agentloop bus events, batched every
 * `flushMs`. Nothing is serialized while no page is connected. Pages answer approvals through it.
 */
export async function startInspectorServer(options: InspectorServerOptions = {}): Promise<InspectorServer> {
  const host = options.host ?? '127.0.0.1';
  const flushMs = options.flushMs ?? 50;
  const maxStringChars = options.maxStringChars ?? 8000;
  const historyLimit = options.historyLimit ?? 2000;
  const publicDir = path.resolve(options.publicDir ?? INSPECTOR_PUBLIC_DIR);
  const baseSecrets = [...defaultSecrets(), ...(options.secrets ?? [])];
  const chart: ChartDefinition = machineChart(options.machine ?? agentMachine);

  const sessions = new Map<string, Session>();
  const byRootActor = new Map<string, LiveSession>();
  const clients = new Set<Client>();
  const clientWaiters: (() => void)[] = [];
  let queue: Queued[] = [];
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let port = 0;

  const schedule = () => {
    if (timer === undefined) timer = setTimeout(flush, flushMs);
  };

  // ---- what is sent ---------------------------------------------------------------------------

  const infoOf = (session: Session): SessionInfo => {
    if (session.kind === 'saved') return { ...session.view.info, live: false, source: 'saved' };
    const info: SessionInfo = {
      id: session.id,
      name: session.name,
      live: session.attached,
      source: 'live',
      state: topState(snapshotOf(session)?.value ?? 'Initializing'),
    };
    if (session.parentId) info.parentId = session.parentId;
    if (session.title) info.title = session.title;
    return info;
  };

  const liveStatus = (session: LiveSession): SessionStatus => {
    const snapshot = snapshotOf(session) ?? { value: 'Initializing', status: 'active', context: undefined };
    const status = statusOf(snapshot, session.sanitize);
    // A stopped agent's snapshot still says `active`.
    if (!session.attached && status.status === 'active') status.status = 'stopped';
    return status;
  };

  const syncOf = (session: Session): SessionSync => {
    if (session.kind === 'saved') {
      const { view } = session;
      return {
        info: infoOf(session),
        status: view.status,
        messages: view.messages,
        events: view.events,
        partial: '',
      };
    }
    const context = snapshotOf(session)?.context;
    return {
      info: infoOf(session),
      status: liveStatus(session),
      messages: session.sanitize(context?.messages ?? []) as unknown[],
      events: session.history.map((e) => session.sanitize(e) as BusEvent),
      partial: session.sanitize(context?.partial ?? '') as string,
    };
  };

  const inspectionRecord = (
    session: LiveSession,
    event: InspectionEvent,
    at: number,
    withContext: boolean,
  ): InspectionRecord | undefined => {
    const actor = event.actorRef as unknown as {
      sessionId: string;
      id: string;
      _parent?: { sessionId: string };
    };
    const base = { sessionId: actor.sessionId, rootId: event.rootId, createdAt: at };
    switch (event.type) {
      case '@xstate.actor': {
        const record: InspectionRecord = {
          ...base,
          type: '@xstate.actor',
          name: actor.id,
          snapshot: { status: 'active' },
        };
        if (actor._parent) record.parentId = actor._parent.sessionId;
        return record;
      }
      case '@xstate.event': {
        const record: InspectionRecord = {
          ...base,
          type: '@xstate.event',
          event: session.sanitizeEvent(event.event),
        };
        const source = (event.sourceRef as { sessionId?: string } | undefined)?.sessionId;
        if (source) record.sourceId = source;
        return record;
      }
      case '@xstate.snapshot': {
        const snap = event.snapshot as unknown as { status?: string; value?: unknown; context?: unknown };
        const isRoot = actor.sessionId === event.rootId;
        const snapshot: NonNullable<InspectionRecord['snapshot']> = {};
        if (snap.status) snapshot.status = snap.status;
        if (isRoot) snapshot.value = snap.value;
        if (isRoot && withContext)
          snapshot.context = sanitizeAgentContext(snap.context, session.sanitize, { lastMessages: 0 });
        return {
          ...base,
          type: '@xstate.snapshot',
          event: { type: (event.event as { type: string }).type },
          snapshot,
        };
      }
      default:
        return undefined;
    }
  };

  // ---- batching -------------------------------------------------------------------------------

  const flush = () => {
    timer = undefined;
    const items = queue;
    queue = [];
    if (clients.size === 0) {
      for (const session of sessions.values()) if (session.kind === 'live') session.stream = '';
      return;
    }
    // The last root snapshot of each session in the batch carries the (sanitized) context.
    const lastSnapshot = new Map<LiveSession, number>();
    items.forEach((q, i) => {
      if (q.item.k === 'inspect' && q.item.event.type === '@xstate.snapshot') {
        const ev = q.item.event;
        if ((ev.actorRef as { sessionId: string }).sessionId === ev.rootId) lastSnapshot.set(q.session, i);
      }
    });
    const out: { seq: number; json: string }[] = [];
    items.forEach((q, i) => {
      let item: BatchItem | undefined;
      if (q.item.k === 'bus') {
        item = { k: 'bus', session: q.session.id, event: q.session.sanitize(q.item.event) as BusEvent };
      } else {
        const record = inspectionRecord(
          q.session,
          q.item.event,
          q.item.at,
          lastSnapshot.get(q.session) === i,
        );
        if (record) item = { k: 'inspect', session: q.session.id, event: record };
      }
      if (item) out.push({ seq: q.seq, json: JSON.stringify(item) });
    });
    // Appended messages, streamed text and the status of every session that changed.
    const tail: string[] = [];
    for (const session of sessions.values()) {
      if (session.kind !== 'live' || !session.dirty) continue;
      session.dirty = false;
      // Streamed text first: the messages that follow replace it.
      if (session.stream) {
        tail.push(
          JSON.stringify({
            k: 'stream',
            session: session.id,
            text: session.sanitize(session.stream) as string,
          } satisfies BatchItem),
        );
        session.stream = '';
      }
      const messages = snapshotOf(session)?.context?.messages ?? [];
      if (messages.length !== session.sentMessages) {
        const from = messages.length < session.sentMessages ? 0 : session.sentMessages;
        tail.push(
          JSON.stringify({
            k: 'messages',
            session: session.id,
            from,
            items: session.sanitize(messages.slice(from)) as unknown[],
          } satisfies BatchItem),
        );
        session.sentMessages = messages.length;
      }
      tail.push(
        JSON.stringify({ k: 'status', session: session.id, status: liveStatus(session) } satisfies BatchItem),
      );
    }
    for (const client of clients) {
      const parts = out.filter((o) => o.seq >= client.fromSeq).map((o) => o.json);
      parts.push(...tail);
      if (parts.length > 0) send(client, `{"t":"batch","items":[${parts.join(',')}]}`);
    }
  };

  const enqueue = (session: LiveSession, item: Queued['item']) => {
    queue.push({ seq: seq++, session, item });
    session.dirty = true;
    schedule();
  };

  const send = (client: Client, json: string) => {
    if (client.ws.readyState === WebSocket.OPEN) client.ws.send(json);
  };

  const broadcast = (message: ServerMessage) => {
    if (clients.size === 0) return;
    const json = JSON.stringify(message);
    for (const client of clients) send(client, json);
  };

  const sessionList = () => [...sessions.values()].map(infoOf);

  /** The agent's snapshot, or undefined while it is still loading a saved session. */
  function snapshotOf(session: LiveSession): SnapshotLike | undefined {
    try {
      return session.agent.actor.getSnapshot() as unknown as SnapshotLike;
    } catch {
      return undefined;
    }
  }

  function findRoot(session: LiveSession): void {
    try {
      session.rootActorId = session.agent.actor.sessionId;
      byRootActor.set(session.rootActorId, session);
    } catch {
      // Still loading: found on its first inspection event.
    }
  }

  // ---- inputs ---------------------------------------------------------------------------------

  const inspect: Observer<InspectionEvent> = {
    next(event) {
      if (clients.size === 0) return;
      let session = byRootActor.get(event.rootId);
      if (!session) {
        // An agent that was still loading its session when it was attached has its actor now.
        for (const s of sessions.values()) if (s.kind === 'live' && s.rootActorId === undefined) findRoot(s);
        session = byRootActor.get(event.rootId);
      }
      if (!session?.attached) return;
      if (
        (event.type === '@xstate.event' || event.type === '@xstate.snapshot') &&
        isTokenChunkEvent(event.event)
      )
        return;
      enqueue(session, { k: 'inspect', event, at: Date.now() });
    },
  };

  const attach: InspectorServer['attach'] = (agent, attachOptions = {}) => {
    const id = agent.sessionId;
    const previous = sessions.get(id);
    if (previous?.kind === 'live') previous.off();
    const session: LiveSession = {
      kind: 'live',
      id,
      name: attachOptions.name ?? 'agent',
      parentId: attachOptions.parentId,
      title: attachOptions.title,
      agent,
      rootActorId: undefined,
      attached: true,
      sanitize: createSanitizer({ secrets: [...baseSecrets, ...agent.inspectionSecrets], maxStringChars }),
      sanitizeEvent: createSanitizer({
        secrets: [...baseSecrets, ...agent.inspectionSecrets],
        maxStringChars,
        countKeys: ['messages'],
      }),
      history: [],
      stream: '',
      sentMessages: 0,
      dirty: false,
      off: () => {},
    };
    session.off = agent.on('*', (event) => {
      if (!session.attached) return;
      if (event.type === 'content_chunk') {
        if (clients.size === 0) return;
        session.stream += event.delta;
        session.dirty = true;
        schedule();
        return;
      }
      session.history.push(event);
      if (session.history.length > historyLimit)
        session.history.splice(0, session.history.length - historyLimit);
      if (clients.size > 0) enqueue(session, { k: 'bus', event });
    });
    sessions.set(id, session);
    findRoot(session);
    session.sentMessages = snapshotOf(session)?.context?.messages?.length ?? 0;
    if (clients.size > 0) {
      broadcast({ t: 'sessions', sessions: sessionList() });
      broadcast({ t: 'sync', session: syncOf(session) });
    }
    return () => {
      if (!session.attached) return;
      // Send what happened up to now, then keep the session listed as finished.
      if (clients.size > 0) {
        session.dirty = true;
        flush();
      }
      session.attached = false;
      session.off();
      if (session.rootActorId) byRootActor.delete(session.rootActorId);
      if (clients.size > 0) {
        broadcast({ t: 'sessions', sessions: sessionList() });
        broadcast({ t: 'sync', session: syncOf(session) });
      }
    };
  };

  const showSaved = (view: SavedSessionView) => {
    const existing = sessions.get(view.info.id);
    if (existing?.kind === 'live') return;
    const session: SavedSession = { kind: 'saved', id: view.info.id, view };
    sessions.set(session.id, session);
    if (clients.size > 0) {
      broadcast({ t: 'sessions', sessions: sessionList() });
      broadcast({ t: 'sync', session: syncOf(session) });
    }
  };

  const onCommand = (client: Client, message: ClientMessage) => {
    const reply = (ok: boolean, error?: string) =>
      send(
        client,
        JSON.stringify({ t: 'ack', id: message.id, ok, ...(error ? { error } : {}) } satisfies ServerMessage),
      );
    const session = sessions.get(message.session);
    if (!session) return reply(false, `no session "${message.session}"`);
    if (message.t === 'sync') {
      send(client, JSON.stringify({ t: 'sync', session: syncOf(session) } satisfies ServerMessage));
      return reply(true);
    }
    if (session.kind !== 'live' || !session.attached) return reply(false, 'this session is not running here');
    try {
      if (message.t === 'approve') session.agent.approve(message.toolCallId);
      else session.agent.reject(message.toolCallId, message.reason ?? 'rejected in the inspector');
      reply(true);
    } catch (error) {
      reply(false, error instanceof Error ? error.message : String(error));
    }
  };

  // ---- HTTP and WebSocket ---------------------------------------------------------------------

  const allowedHost = (hostHeader: string | undefined) => {
    if (!hostHeader) return false;
    const name = hostHeader.replace(/:\d+$/, '');
    return name === '127.0.0.1' || name === 'localhost' || name === '[::1]' || name === host;
  };

  const serveFile = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowedHost(req.headers.host)) {
      res.writeHead(403).end('forbidden host');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    const urlPath = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path.resolve(publicDir, `.${urlPath === '/' ? '/index.html' : urlPath}`);
    if (!file.startsWith(publicDir + path.sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-security-policy':
          "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end(
          urlPath === '/' || urlPath === '/index.html'
            ? 'inspector page not built: run `npm run build`'
            : 'not found',
        );
    }
  };

  const sameHost = (origin: string, hostHeader: string | undefined) => {
    try {
      return new URL(origin).host === hostHeader;
    } catch {
      return false;
    }
  };

  const http = createServer((req, res) => {
    void serveFile(req, res);
  });
  const wss = new WebSocketServer({
    server: http,
    path: '/ws',
    // Only this page may connect (a browser always sends Origin; another site's page must not drive approvals).
    verifyClient: ({ origin, req }: { origin: string | undefined; req: IncomingMessage }) =>
      allowedHost(req.headers.host) && (origin === undefined || sameHost(origin, req.headers.host)),
  });
  wss.on('connection', (ws) => {
    const client: Client = { ws, fromSeq: seq };
    clients.add(client);
    for (const resolve of clientWaiters.splice(0)) resolve();
    const hello: ServerMessage = { t: 'hello', version: 1, chart, sessions: sessionList() };
    ws.send(JSON.stringify(hello));
    for (const session of sessions.values()) ws.send(JSON.stringify({ t: 'sync', session: syncOf(session) }));
    ws.on('message', (data) => {
      let message: ClientMessage;
      try {
        message = JSON.parse(data.toString()) as ClientMessage;
      } catch {
        return;
      }
      onCommand(client, message);
    });
    ws.on('close', () => clients.delete(client));
    ws.on('error', () => clients.delete(client));
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;

  return {
    url,
    port,
    inspect,
    attach,
    showSaved,
    get clientCount() {
      return clients.size;
    },
    waitForClient: () =>
      clients.size > 0 ? Promise.resolve() : new Promise<void>((resolve) => clientWaiters.push(resolve)),
    close: async () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const session of sessions.values()) if (session.kind === 'live') session.off();
      for (const client of clients) client.ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
