import { createA2aServer } from '../../server/a2a/index.js';
import { type AgentServerOptions, createAgentServer, type StartedAgentServer } from '../../server/index.js';
import { listenOn } from '../../server/listen-on.js';
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
  const listening = await listenOn(
    (req, res) => (a2a?.handles(req) ? a2a(req, res) : agui(req, res)),
    options,
  );
  const url = listening.url;
  a2a = createA2aServer({
    agent: options.agent,
    store: options.store,
    url,
    ...(options.auth ? { auth: options.auth } : {}),
    ...(options.cors ? { cors: options.cors } : {}),
    card: { name: card.name, description: card.description },
    ...(card.pushHosts ? { push: { allowedHosts: card.pushHosts } } : {}),
  });
  const served = a2a;
  return {
    url,
    server: listening.server,
    close: () => listening.close(async () => void (await Promise.all([agui.close(), served.close()]))),
  };
}
