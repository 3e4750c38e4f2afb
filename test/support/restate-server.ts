import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { type RestateServer, restateServerBinary } from './restate-server.mjs';

export { type RestateServer, restateServerBinary, startRestateServer } from './restate-server.mjs';

/**
 * The opening of a file of Restate tests: the SDK's logging at `level` unless it is set (the SDK logs
 * each invocation at INFO; child processes inherit it), and the restate-server binary of the npm
 * package, or what is missing (warned; the file skips its tests with `describe.skipIf('missing' in
 * binary)`).
 */
export function restateBinaryFor(level: 'WARN' | 'ERROR'): ReturnType<typeof restateServerBinary> {
  process.env.RESTATE_LOGGING ??= level;
  const binary = restateServerBinary();
  if ('missing' in binary) console.warn(`restate tests skipped: ${binary.missing}`);
  return binary;
}

/** What an endpoint serves: a service, virtual object (an agent) or workflow. */
type Bound = Parameters<restate.RestateEndpoint['bind']>[0];

/** Serves `services` on one endpoint ({@link serveEndpoint}) and registers it with `server`. */
export async function registeredEndpoint(
  server: RestateServer,
  ...services: Bound[]
): Promise<{ url: string; close(): Promise<void> }> {
  let endpoint = restate.endpoint();
  for (const service of services) endpoint = endpoint.bind(service);
  const served = await serveEndpoint(endpoint.http2Handler());
  await server.register(served.url);
  return served;
}

/** Serves a Restate endpoint's HTTP/2 handler on 127.0.0.1 (an OS-chosen port). */
export async function serveEndpoint(
  handler: (request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Restate keeps its HTTP/2 connections open: end them so the server can close.
        for (const session of sessions) session.destroy();
      }),
  };
}
