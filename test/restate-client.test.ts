import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestateClientError, restateClient } from '../src/engines/restate/index.js';

// restateClient against an HTTP server on 127.0.0.1 that plays a misbehaving ingress: one that never
// answers (the caller's signal bounds the wait) and one that answers with text that is not JSON.

describe('restateClient against a misbehaving ingress', () => {
  let server: Server;
  let url: string;
  const held: ServerResponse[] = [];
  const paths: string[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      paths.push(request.url ?? '');
      request.resume();
      if (request.url?.includes('/held/')) {
        held.push(response);
        return;
      }
      if (request.url?.includes('/garbled/')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('<html>a proxy page</html>');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('true');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const response of held) response.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('stops waiting when the call is aborted, naming the call, the session and the address', async () => {
    const client = restateClient({ url, agent: 'support' });
    const controller = new AbortController();
    const waiting = client.send('held', 'hello', { signal: controller.signal });
    waiting.catch(() => {});
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort(new Error('the user closed the page'));
    const error = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RestateClientError);
    expect((error as Error).message).toBe(
      `agentloop/restate: send on session "held" at ${url} stopped waiting (Error: the user closed the page); what Restate already took goes on: read the session's state to see where it stands`,
    );
    expect((error as RestateClientError).status).toBeUndefined();
  });

  it('refuses an already aborted signal before anything is sent', async () => {
    const client = restateClient({ url, agent: 'support' });
    const before = paths.length;
    const error = await client.approve('ok', 'call-1', {}, { signal: AbortSignal.abort('late') }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RestateClientError);
    expect((error as Error).message).toContain('approve on session "ok"');
    expect((error as Error).message).toContain('stopped waiting (late)');
    expect(paths.length).toBe(before);
  });

  it('names the call when the answer is not JSON, and reads a JSON answer', async () => {
    const client = restateClient({ url, agent: 'support' });
    const error = await client.state('garbled').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RestateClientError);
    expect((error as Error).message).toBe(
      `agentloop/restate: state on session "garbled" of agent "support" at ${url} answered with text that is not JSON (HTTP 200, 25 characters: "<html>a proxy page</html>")`,
    );
    expect((error as RestateClientError).status).toBe(200);
    expect(await client.interrupt('ok')).toBe(true);
  });
});
