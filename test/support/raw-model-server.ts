import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/**
 * One raw answer, written as given: shapes real servers send that the scripted server never does.
 * - `json`: a non-streamed body (`application/json`).
 * - `sse`: `data:` events (objects are serialised, strings sent as they are), then `data: [DONE]`
 *   unless `done: false`; an `event` name per item when the item is `{ event, data }`; an item
 *   `{ pauseMs }` waits that long before the next one is written.
 */
export type RawReply =
  | { json: unknown; status?: number }
  | { sse: Array<unknown | { event: string; data: unknown }>; done?: boolean };

/** A server answering each request with the next raw reply (a 500 when they run out). */
export interface RawModelServer {
  url: string;
  /** The parsed request bodies, in arrival order. */
  readonly requests: Array<Record<string, unknown>>;
}

const open: http.Server[] = [];
afterEach(async () => {
  await Promise.all(
    open.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** Starts a raw model server on 127.0.0.1; it is closed after the test. */
export async function startRawModelServer(replies: RawReply[]): Promise<RawModelServer> {
  const queue = [...replies];
  const requests: Array<Record<string, unknown>> = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      requests.push(JSON.parse(Buffer.concat(parts).toString() || '{}') as Record<string, unknown>);
      const reply = queue.shift();
      if (reply === undefined) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: 'no reply left in the raw script', type: 'server_error' } }),
        );
        return;
      }
      if ('json' in reply) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.json));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        for (const item of reply.sse) {
          const pause = (item as { pauseMs?: unknown }).pauseMs;
          if (typeof pause === 'number') await new Promise((r) => setTimeout(r, pause));
          else res.write(sseEvent(item));
        }
        res.end(reply.done === false ? '' : 'data: [DONE]\n\n');
      })();
    });
  });
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests };
}

function sseEvent(item: unknown): string {
  const named = typeof item === 'object' && item !== null && 'event' in item && 'data' in item;
  const data = named ? (item as { data: unknown }).data : item;
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `${named ? `event: ${(item as { event: string }).event}\n` : ''}data: ${text}\n\n`;
}

/** A Chat Completions chunk with one choice (`choices: []` when `delta` is `null`). */
export function chunk(delta: Record<string, unknown> | null, finish: string | null = null, extra = {}) {
  return {
    id: 'chatcmpl-raw',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'raw-model',
    choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

/** A non-streamed `chat.completion` body with this message. */
export function completion(message: Record<string, unknown>, finish = 'stop', extra = {}) {
  return {
    id: 'chatcmpl-raw',
    object: 'chat.completion',
    created: 1,
    model: 'raw-model',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    ...extra,
  };
}
