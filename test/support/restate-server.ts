import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export {
  type RestateServer,
  restateServerBinary,
  startRestateServer,
} from './restate-server.mjs';

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
