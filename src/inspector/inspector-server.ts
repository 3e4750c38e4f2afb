// The local inspector server: wires the page's files (page-files.ts), the pages' WebSocket
// (page-connections.ts, page-protocol.ts), the sessions it shows (tracked-sessions.ts,
// live-session.ts) and the recording of their events (event-recorder.ts) into one HTTP server.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { AnyStateMachine, InspectionEvent, Observer } from 'xstate';
import type { Agent } from '../agent/agent.js';
import { forkSession } from '../evals/fork-session.js';
import { agentMachine } from '../machines/agent-machine.js';
import type { SessionStore } from '../session/session-store.js';
import { newAccessToken } from './access-token.js';
import { EventRecorder } from './event-recorder.js';
import { type AttachOptions, createLiveSession, snapshotOf } from './live-session.js';
import { machineChart } from './machine-graph.js';
import { PageConnections } from './page-connections.js';
import { INSPECTOR_PUBLIC_DIR, pageFiles } from './page-files.js';
import { answerFrame, type ForkSaved, greeting } from './page-protocol.js';
import { createSanitizer, defaultSecrets } from './sanitize.js';
import { type SavedSessionView, savedSessionView } from './saved-sessions.js';
import { sessionSync, type TrackedSession, TrackedSessions } from './tracked-sessions.js';

export type { SavedSessionView } from './saved-sessions.js';

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
  /** Where the page's files are (default: `inspector/public` in the package). */
  publicDir?: string;
  /** The machine drawn on the page (default `agentMachine`). */
  machine?: AnyStateMachine;
  /**
   * The store the saved sessions shown come from: with it, a page may fork a saved session at a rest
   * point ("Fork here", `forkSession`); the fork is saved there and shown. Without it, no fork.
   */
  store?: SessionStore;
}

/** A running local inspector. */
export interface InspectorServer {
  /**
   * The page with this server's token, e.g. `http://127.0.0.1:4777/?token=…`. The page and its
   * WebSocket answer 401 without the token; it is new each time a server starts.
   */
  readonly url: string;
  readonly port: number;
  /**
   * The XState inspection observer: give it to `createAgent({ inspect: server.inspect })`, then
   * `attach` the agent. With no page open it returns at once.
   */
  readonly inspect: Observer<InspectionEvent>;
  /** Shows an agent: its statechart, events, transcript and approvals. Returns a function that detaches it. */
  attach(agent: Agent<unknown>, options?: AttachOptions): () => void;
  /** Adds (or replaces) a saved session. */
  showSaved(view: SavedSessionView): void;
  /** Pages connected now. */
  readonly clientCount: number;
  /** Resolves when a page is connected (at once if one is). */
  waitForClient(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the local inspector: an HTTP server for the page (`inspector/public`) and a WebSocket at
 * `/ws` carrying sanitized XState inspection events and agentloop bus events, batched every
 * `flushMs`. Nothing is serialized while no page is connected. Pages answer approvals through it.
 */
export async function startInspectorServer(options: InspectorServerOptions = {}): Promise<InspectorServer> {
  const host = options.host ?? '127.0.0.1';
  const maxStringChars = options.maxStringChars ?? 8000;
  const publicDir = path.resolve(options.publicDir ?? INSPECTOR_PUBLIC_DIR);
  const secrets = [...defaultSecrets(), ...(options.secrets ?? [])];
  const chart = machineChart(options.machine ?? agentMachine);

  const sessions = new TrackedSessions();
  const pages = new PageConnections();
  const recorder = new EventRecorder(sessions, pages, {
    flushMs: options.flushMs ?? 50,
    historyLimit: options.historyLimit ?? 2000,
  });

  /** Tells the open pages about a session that was added, replaced or ended. */
  const announce = (session: TrackedSession) => {
    if (pages.count === 0) return;
    pages.broadcast({ t: 'sessions', sessions: sessions.list() });
    pages.broadcast({ t: 'sync', session: sessionSync(session) });
  };

  const attach: InspectorServer['attach'] = (agent, attachOptions = {}) => {
    const previous = sessions.get(agent.sessionId);
    if (previous?.kind === 'live') previous.off();
    const session = createLiveSession(agent, attachOptions, { secrets, maxStringChars });
    session.off = recorder.follow(session);
    sessions.set(session);
    session.sentMessages = snapshotOf(session)?.context?.messages?.length ?? 0;
    announce(session);
    return () => {
      if (!session.attached) return;
      // Send what happened up to now, then keep the session listed as finished.
      if (pages.count > 0) {
        session.dirty = true;
        recorder.flush();
      }
      session.attached = false;
      session.off();
      sessions.release(session);
      announce(session);
    };
  };

  const store = options.store;
  const showSaved = (view: SavedSessionView) => {
    if (sessions.get(view.info.id)?.kind === 'live') return;
    // Fork points are offered only when a fork can be made.
    const shown = store ? view : { ...view, forkPoints: [] };
    const session: TrackedSession = { kind: 'saved', id: view.info.id, view: shown };
    sessions.set(session);
    announce(session);
  };

  const sanitize = createSanitizer({ secrets, maxStringChars });
  const fork: ForkSaved | undefined = store
    ? async (id, seq) => {
        const forked = await forkSession(store, id, { at: seq });
        showSaved(await savedSessionView(store, forked.record, sanitize));
        return forked.id;
      }
    : undefined;

  const token = newAccessToken();
  const serveFile = pageFiles(publicDir, host, token);
  const http = createServer((req, res) => {
    void serveFile(req, res); // never rejects: failures are answered (page-files.ts)
  });
  pages.listen(http, host, token, {
    nextSeq: () => recorder.nextSeq,
    onOpen: (page) => {
      for (const message of greeting(chart, sessions)) pages.send(page, JSON.stringify(message));
    },
    onMessage: (page, frame) =>
      answerFrame(frame, sessions, (reply) => pages.send(page, JSON.stringify(reply)), fork),
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/?token=${token}`;

  return {
    url,
    port,
    inspect: recorder.inspect,
    attach,
    showSaved,
    get clientCount() {
      return pages.count;
    },
    waitForClient: () => pages.waitForPage(),
    close: async () => {
      recorder.stop();
      for (const session of sessions.live()) session.off();
      pages.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
