// A page's side of the local inspector for tests: its WebSocket (built from the server's `url`, so it
// carries the same query, token included) and raw HTTP requests with chosen headers.
import { request } from 'node:http';
import { afterEach } from 'vitest';
import { WebSocket } from 'ws';
import type { ClientMessage, ServerMessage } from '../../src/inspector/protocol.js';

const open: WebSocket[] = [];
afterEach(() => {
  for (const ws of open.splice(0)) ws.terminate();
});

/** The page's WebSocket address for a page at `pageUrl`: `/ws` with the page's own query. */
export function socketUrl(pageUrl: string): string {
  const url = new URL(pageUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = '/ws';
  return url.toString();
}

/** A page's WebSocket: every message it got, and a way to wait for the next one that matches. */
export async function connectPage(pageUrl: string) {
  const ws = new WebSocket(socketUrl(pageUrl));
  open.push(ws);
  const got: ServerMessage[] = [];
  const waiters: { test: (m: ServerMessage) => boolean; resolve: (m: ServerMessage) => void }[] = [];
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as ServerMessage;
    got.push(message);
    for (const w of [...waiters]) {
      if (w.test(message)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(message);
      }
    }
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  /** The first message that matches, among those already got (unless `onlyNew`) and those to come. */
  const waitFor = <T extends ServerMessage>(test: (m: ServerMessage) => boolean, onlyNew = false) =>
    new Promise<T>((resolve, reject) => {
      const seen = onlyNew ? undefined : got.find(test);
      if (seen) return resolve(seen as T);
      const timer = setTimeout(() => reject(new Error(`no such message: ${test}`)), 5000);
      waiters.push({
        test,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m as T);
        },
      });
    });
  const items = () => got.flatMap((m) => (m.t === 'batch' ? m.items : []));
  const ack = (id: number) =>
    waitFor<Extract<ServerMessage, { t: 'ack' }>>((m) => m.t === 'ack' && m.id === id);
  const sendCommand = (message: ClientMessage) => ws.send(JSON.stringify(message));
  return { ws, got, waitFor, items, ack, send: sendCommand };
}

export type PageSocket = Awaited<ReturnType<typeof connectPage>>;

/** One HTTP request to 127.0.0.1:`port`, with the headers given (e.g. a foreign `host`). */
export function httpGet(
  port: number,
  urlPath: string,
  options: { host?: string; method?: string; headers?: Record<string, string> } = {},
) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: urlPath,
          method: options.method ?? 'GET',
          headers: { ...(options.host ? { host: options.host } : {}), ...options.headers },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end();
    },
  );
}

/**
 * Opens a WebSocket to `url` and says how the upgrade ended: 101 when it opened (then closes it),
 * else the HTTP status of the refusal.
 */
export function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  const { origin, ...rest } = headers;
  const ws = new WebSocket(url, { headers: rest, ...(origin ? { origin } : {}) });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}
