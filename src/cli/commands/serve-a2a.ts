import { createServer } from 'node:http';
import { createA2aServer } from '../../server/a2a/index.js';
import { type AgentServerOptions, createAgentServer, type StartedAgentServer } from '../../server/index.js';
import { checkExposure } from '../../server/request-auth.js';

/**
 * `serve --a2a`: one HTTP server with the AG-UI endpoints and, beside them, the A2A card and JSON-RPC
 * endpoint for the same agent, store and auth (the card names the URL it listens on).
 */
export async function startAgentAndA2aServer(
  options: AgentServerOptions & {
    agent: NonNullable<AgentServerOptions['agent']>;
    host: string;
    port: number;
  },
  card: { name: string; description: string; pushHosts?: string[] },
): Promise<StartedAgentServer> {
  checkExposure(options.host, options.auth);
  const agui = createAgentServer(options);
  let a2a: ReturnType<typeof createA2aServer> | undefined;
  const server = createServer((req, res) => (a2a?.handles(req) ? a2a(req, res) : agui(req, res)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  a2a = createA2aServer({
    agent: options.agent,
    store: options.store,
    url,
    ...(options.auth ? { auth: options.auth } : {}),
    ...(options.cors ? { cors: options.cors } : {}),
    card: { name: card.name, description: card.description },
    ...(card.pushHosts ? { push: { allowedHosts: card.pushHosts } } : {}),
  });
  return {
    url,
    server,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.all([agui.close(), a2a?.close()]);
      server.closeAllConnections();
      await closed;
    },
  };
}
