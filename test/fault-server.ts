import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';

/** One scripted answer of the fault server. */
export type Fault =
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'reset' }
  /** Sends these content deltas as SSE chunks, then destroys the socket (no finish, no [DONE]). */
  | { kind: 'cut'; deltas: string[] }
  /** Sends these deltas, then an SSE `error` object, then ends. */
  | { kind: 'sse-error'; deltas: string[]; error: { message: string; type?: string; code?: string } }
  /** Never answers (for client timeouts). */
  | { kind: 'hang' }
  /** A normal completion (streamed when the request asks for a stream). */
  | { kind: 'ok'; text: string };

export interface FaultServer {
  url: string;
  /** Requests received so far. */
  readonly requests: number;
  client(options?: { timeout?: number }): OpenAI;
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const body = {
    id: 'chatcmpl-fault',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'fault-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/**
 * A node:http server on 127.0.0.1 that answers each request with the next scripted fault
 * (then `ok` once the script runs out), for driving the real OpenAI SDK into real errors.
 */
export async function startFaultServer(script: Fault[]): Promise<FaultServer> {
  const queue = [...script];
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const fault = queue.shift() ?? { kind: 'ok', text: 'fine' };
      const wantsStream = (JSON.parse(Buffer.concat(chunks).toString() || '{}') as { stream?: boolean })
        .stream;
      switch (fault.kind) {
        case 'status':
          res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
          res.end(
            JSON.stringify(fault.body ?? { error: { message: `status ${fault.status}`, type: 'test' } }),
          );
          return;
        case 'reset':
          req.socket.destroy();
          return;
        case 'hang':
          return;
        case 'cut':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const d of fault.deltas) res.write(chunk({ content: d }));
          setTimeout(() => res.socket?.destroy(), 20);
          return;
        case 'sse-error':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const d of fault.deltas) res.write(chunk({ content: d }));
          res.end(`data: ${JSON.stringify({ error: fault.error })}\n\n`);
          return;
        case 'ok':
          if (wantsStream) {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(chunk({ role: 'assistant', content: fault.text }));
            res.write(chunk({}, 'stop'));
            res.end('data: [DONE]\n\n');
          } else {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                id: 'chatcmpl-fault',
                object: 'chat.completion',
                created: 1,
                model: 'fault-model',
                choices: [
                  { index: 0, message: { role: 'assistant', content: fault.text }, finish_reason: 'stop' },
                ],
              }),
            );
          }
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/v1`;
  return {
    url,
    get requests() {
      return requests;
    },
    client: (options = {}) => new OpenAI({ baseURL: url, apiKey: 'test-key', maxRetries: 0, ...options }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Streams a completion to its end and returns the text, as the `callLlm` actor would. */
export async function streamText(client: OpenAI, signal?: AbortSignal): Promise<string> {
  const stream = await client.chat.completions.create(
    { model: 'fault-model', messages: [{ role: 'user', content: 'hi' }], stream: true },
    signal ? { signal } : {},
  );
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  return text;
}
