// The WebSocket at `/ws`: the pages connected to the inspector server.
import type { IncomingMessage, Server } from 'node:http';
import { WebSocket, WebSocketServer } from 'ws';
import { isLocalHost, isSameOrigin } from './local-origin.js';
import type { ClientMessage, ServerMessage } from './protocol.js';

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
  /** A page sent a message (a JSON object; not checked further). */
  onMessage(page: ConnectedPage, message: ClientMessage): void;
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
   * origin (a browser always sends `Origin`; another site's page must not drive approvals).
   */
  listen(http: Server, host: string, handlers: PageHandlers): void {
    const wss = new WebSocketServer({
      server: http,
      path: '/ws',
      verifyClient: ({ origin, req }: { origin: string | undefined; req: IncomingMessage }) =>
        isLocalHost(req.headers.host, host) &&
        (origin === undefined || isSameOrigin(origin, req.headers.host)),
    });
    wss.on('connection', (ws) => {
      const page: ConnectedPage = { ws, fromSeq: handlers.nextSeq() };
      this.#pages.add(page);
      for (const resolve of this.#waiters.splice(0)) resolve();
      handlers.onOpen(page);
      ws.on('message', (data) => {
        let message: unknown;
        try {
          message = JSON.parse(data.toString());
        } catch {
          return;
        }
        // Not even an object (`null`, `42`): nothing to answer.
        if (typeof message !== 'object' || message === null) return;
        handlers.onMessage(page, message as ClientMessage);
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
