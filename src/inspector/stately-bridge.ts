import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { isLocalHost, isSameOrigin } from './local-origin.js';

/** Where the Stately inspector UI lives (it needs internet). */
export const STATELY_INSPECT_URL = 'https://stately.ai/inspect';
/** The port `@statelyai/inspect`'s WebSocket inspector and server use by default. */
export const DEFAULT_STATELY_PORT = 8080;
/** The bridge listens on this machine only. */
const BRIDGE_HOST = '127.0.0.1';

/** Headers of every answer: never cached or sniffed, and never framed by another page. */
const BRIDGE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
};

/** A running bridge: a page at `pageUrl` that relays inspection events into the Stately inspector. */
export interface StatelyBridge {
  /** Open this in a browser (with internet access) to see the agent in the Stately inspector. */
  readonly pageUrl: string;
  /** `ws://` URL the agent's WebSocket inspector connects to. */
  readonly wsUrl: string;
  readonly port: number;
  /** False when another process already listened on the port (that one is assumed to be a bridge). */
  readonly owned: boolean;
  /** Releases this hold; the server stops when the last hold is released. */
  release(): Promise<void>;
}

function bridgePage(): string {
  // The same protocol as @statelyai/inspect/server: WebSocket in, postMessage to the embedded
  // inspector once it says it is connected.
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>agentloop · Stately inspector</title>
<style>html,body{height:100%;margin:0}iframe{width:100%;height:100%;border:0}</style></head>
<body><iframe id="inspector" src="${STATELY_INSPECT_URL}"></iframe>
<script>
const iframe = document.getElementById('inspector');
const buffer = [];
let connected = false;
window.addEventListener('message', (e) => {
  if (e.data && e.data.type === '@statelyai.connected') {
    connected = true;
    for (const event of buffer.splice(0)) iframe.contentWindow.postMessage(event, '*');
  }
});
const ws = new WebSocket('ws://' + location.host);
ws.onmessage = (event) => {
  const data = JSON.parse(event.data);
  if (connected) iframe.contentWindow.postMessage(data, '*');
  else buffer.push(data);
};
</script></body></html>`;
}

interface Running {
  server: Server;
  wss: WebSocketServer;
  holds: number;
  port: number;
}

const running = new Map<number, Promise<Running | null>>();

/**
 * Starts (or joins, within this process) the bridge page on `127.0.0.1:port`: an HTTP page embedding
 * the Stately inspector, and a WebSocket relay that passes every message one client sends to the
 * others (the last 200 are replayed to a page that connects late). When the port is taken by another
 * process, that process is assumed to be a bridge (for example `@statelyai/inspect/server`).
 */
export async function startStatelyBridge(port: number = DEFAULT_STATELY_PORT): Promise<StatelyBridge> {
  let entry = running.get(port);
  if (!entry) {
    entry = listen(port);
    running.set(port, entry);
  }
  const bridge = await entry;
  if (bridge === null) {
    running.delete(port);
    return {
      pageUrl: `http://127.0.0.1:${port}`,
      wsUrl: `ws://127.0.0.1:${port}`,
      port,
      owned: false,
      release: async () => {},
    };
  }
  bridge.holds += 1;
  let released = false;
  return {
    pageUrl: `http://127.0.0.1:${bridge.port}`,
    wsUrl: `ws://127.0.0.1:${bridge.port}`,
    port: bridge.port,
    owned: true,
    release: async () => {
      if (released) return;
      released = true;
      bridge.holds -= 1;
      if (bridge.holds > 0) return;
      running.delete(port);
      for (const client of bridge.wss.clients) client.terminate();
      bridge.wss.close();
      await new Promise<void>((resolve) => bridge.server.close(() => resolve()));
    },
  };
}

function listen(port: number): Promise<Running | null> {
  // The local inspector's checks (local-origin.ts): the page only for requests naming this machine
  // (no DNS rebinding), sockets only from this machine and from no other site's page (the agent's
  // inspector, in Node, sends no Origin; the bridge page sends its own).
  const server = createServer((req, res) => {
    const refuse = (status: number, text: string, headers: Record<string, string> = {}) =>
      res.writeHead(status, { ...BRIDGE_HEADERS, 'content-type': 'text/plain', ...headers }).end(text);
    if (!isLocalHost(req.headers.host, BRIDGE_HOST)) return refuse(403, 'forbidden host');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return refuse(405, 'method not allowed', { allow: 'GET, HEAD' });
    }
    res.writeHead(200, { ...BRIDGE_HEADERS, 'content-type': 'text/html; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : bridgePage());
  });
  const wss = new WebSocketServer({
    server,
    verifyClient: (
      { origin, req }: { origin: string | undefined; req: IncomingMessage },
      admit: (ok: boolean, status?: number) => void,
    ) =>
      admit(
        isLocalHost(req.headers.host, BRIDGE_HOST) &&
          (origin === undefined || isSameOrigin(origin, req.headers.host)),
        403,
      ),
  });
  // ws re-emits the HTTP server's errors here: with no listener EADDRINUSE (another process holds
  // the port, which the listen below answers by joining it) would be thrown and end the process.
  wss.on('error', () => {});
  const replay: string[] = [];
  wss.on('connection', (ws) => {
    // A malformed frame (invalid UTF-8, too large) is an 'error' on the socket: without a
    // listener it would be thrown, and the agent's process would end.
    ws.on('error', () => ws.terminate());
    for (const message of replay) ws.send(message);
    ws.on('message', (data) => {
      const message = data.toString();
      replay.push(message);
      if (replay.length > 200) replay.shift();
      for (const client of wss.clients) {
        if (client !== ws && client.readyState === WebSocket.OPEN) client.send(message);
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(null);
      else reject(error);
    });
    server.listen(port, BRIDGE_HOST, () => {
      resolve({ server, wss, holds: 0, port: (server.address() as AddressInfo).port });
    });
  });
}
