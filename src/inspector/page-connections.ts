// The WebSocket at `/ws`: the pages connected to the inspector server.
import type { IncomingMessage, Server } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import { hasToken } from './access-token.js';
import { isLocalHost, isSameOrigin } from './local-origin.js';
import type { ServerMessage } from './protocol.js';

/** The page sends short commands: a larger frame closes its connection (1009) rather than being read. */
const MAX_FRAME_BYTES = 64 * 1024;

/** One open page. */
export interface ConnectedPage {
  readonly ws: WebSocket;
  /** Queued events with a lower sequence number happened before this page's sync: not sent to it. */
  readonly fromSeq: number;
}

/** What the server does with a page. */
export interface PageHandlers {
  /** The sequence number of the next queued event (see {@link ConnectedPage.fromSeq}). */
  nextSeq(): number;
  /** A page connected: greet it. */
  onOpen(page: ConnectedPage): void;
  /** A page sent a frame (its text, unchecked: the handler validates it and answers). */
  onMessage(page: ConnectedPage, frame: string): void;
}

/** The pages connected over the WebSocket, and how to reach them. */
export class PageConnections {
  readonly #pages = new Set<ConnectedPage>();
  readonly #waiters: (() => void)[] = [];
  #wss: WebSocketServer | undefined;

  /** Pages connected now. */
  get count(): number {
    return this.#pages.size;
  }

  [Symbol.iterator](): IterableIterator<ConnectedPage> {
    return this.#pages.values();
  }

  /**
   * Accepts pages at `/ws` on `http`: only from this machine (`Host`) and only from the page's own
   * origin (a browser always sends `Origin`; another site's page must not drive approvals): else 403;
   * and only with the server's token (`/ws?token=...`, as the page's own URL has it): else 401.
   */
  listen(http: Server, host: string, token: string, handlers: PageHandlers): void {
    const wss = new WebSocketServer({
      server: http,
      path: '/ws',
      maxPayload: MAX_FRAME_BYTES,
      verifyClient: (
        { origin, req }: { origin: string | undefined; req: IncomingMessage },
        admit: (ok: boolean, status?: number) => void,
      ) => {
        const local =
          isLocalHost(req.headers.host, host) &&
          (origin === undefined || isSameOrigin(origin, req.headers.host));
        if (!local) admit(false, 403);
        else if (!hasToken(req.url, token)) admit(false, 401);
        else admit(true);
      },
    });
    // ws re-emits the HTTP server's errors (EADDRINUSE) here: with no listener that is a throw that
    // ends the process; startInspectorServer's listen() rejects with them instead.
    wss.on('error', () => {});
    wss.on('connection', (ws) => {
      const page: ConnectedPage = { ws, fromSeq: handlers.nextSeq() };
      this.#pages.add(page);
      for (const resolve of this.#waiters.splice(0)) resolve();
      handlers.onOpen(page);
      ws.on('message', (data) => {
        // A throw here would be an uncaught exception: the agent's process would end.
        try {
          handlers.onMessage(page, data.toString());
        } catch (error) {
          const reason = error instanceof Error ? error.message : 'failed';
          this.send(
            page,
            JSON.stringify({ t: 'error', error: `internal error: ${reason}` } satisfies ServerMessage),
          );
        }
      });
      ws.on('close', () => this.#pages.delete(page));
      ws.on('error', () => this.#pages.delete(page));
    });
    this.#wss = wss;
  }

  /** Sends a serialized message to one page, if it is still open. */
  send(page: ConnectedPage, json: string): void {
    if (page.ws.readyState === WebSocket.OPEN) page.ws.send(json);
  }

  /** Sends a message to every page (serialized once; not at all when none is open). */
  broadcast(message: ServerMessage): void {
    if (this.#pages.size === 0) return;
    const json = JSON.stringify(message);
    for (const page of this.#pages) this.send(page, json);
  }

  /** Resolves when a page is connected (at once if one is). */
  waitForPage(): Promise<void> {
    if (this.#pages.size > 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Drops every page and stops accepting new ones. */
  close(): void {
    for (const page of this.#pages) page.ws.terminate();
    this.#wss?.close();
  }
}
