import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A Node HTTP server listening for a handler: where, and how to stop it. */
export interface ListeningServer {
  /** `http://<host>:<port>` (an IPv6 host in brackets), the port the one listened on. */
  url: string;
  server: Server;
  /**
   * Stops taking connections and closes the idle ones, runs `drain` (the handler's own close: its
   * runs come to rest), then cuts the connections still open and resolves once the server closed.
   */
  close(drain?: () => Promise<void>): Promise<void>;
}

/**
 * Listens with `handler` on `host` and `port` (0: one the OS picks); rejects when the port cannot be
 * taken. Shared by every server of `agentloop/server` (AG-UI, A2A, MCP over HTTP).
 */
export async function listenOn(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  where: { host: string; port: number },
): Promise<ListeningServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : where.port;
  const host = where.host.includes(':') ? `[${where.host}]` : where.host;
  return {
    url: `http://${host}:${port}`,
    server,
    close: async (drain) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await drain?.();
      server.closeAllConnections();
      await closed;
    },
  };
}
