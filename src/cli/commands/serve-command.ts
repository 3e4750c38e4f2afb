import { startAgentServer } from '../../server/index.js';
import { AGENT_FLAG_OPTIONS, loadServedAgent, SKILLS_USAGE } from '../cli-agent.js';
import { parseFlags, positiveInteger, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { MCP_CONFIG_FLAG } from '../flags/mcp-config-flag.js';
import { STORE_FLAG_OPTIONS } from '../flags/store-flag.js';
import { MODEL_FLAG_OPTIONS } from '../model/model-connection.js';
import { untilInterrupted } from '../until-interrupted.js';
import { a2aSdkMissing } from './a2a-command.js';

const USAGE = `Usage: agentloop serve --bundle <root> --agent <id> [options]
       agentloop serve --skills <dir> | --mcp-config <file> [options]
  Serves the agent to web apps over AG-UI (docs/serve.md): POST /agents/default/runs takes a
  RunAgentInput and streams the run's events; GET /agents/default/threads/<id>/events reconnects.
  A chat page is at / (with --token, open it as /#token=<token>).
  Threads are sessions of the store, so several servers on one store serve the same threads.
  --store <url-or-dir>  a postgres:// URL (--schema <name>) or a sessions folder (default: the
                        sessions folder, .agentloop/sessions or $AGENTLOOP_HOME/sessions)
  --project <dir> --bundle <root> --agent <id> --output <dir>   the agent, as for run and chat
${SKILLS_USAGE}  --mcp-config <file>   an mcp.json: its servers' tools join the agent's
  --host <host>         where to listen (default 127.0.0.1); anything else needs --token
  --port <port>         the port (default 8787; 0 picks one)
  --cors <origin>       an origin allowed to call from a browser (repeat; * for any); none by default
  --token <bearer>      callers must send Authorization: Bearer <token> (or AGENTLOOP_SERVE_TOKEN)
  --a2a                 also serve the agent to other agents over A2A (docs/a2a.md): its card at
                        /.well-known/agent-card.json, JSON-RPC at /a2a (needs @a2a-js/sdk)
  --push-host <host>    (with --a2a) a host A2A push notifications may go to (repeat); none by default
  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
                        the model (default: OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL; with none,
                        the bundle's scripted demo when it ships one)
Exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 could not start, 2 bad flags.
`;

/** `agentloop serve`: the agent behind an AG-UI endpoint (agentloop/server), on a store. */
export async function runServeCommand(args: string[], io: CommandIo, signal?: AbortSignal): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      ...STORE_FLAG_OPTIONS,
      ...AGENT_FLAG_OPTIONS,
      ...MCP_CONFIG_FLAG,
      host: { type: 'string' },
      port: { type: 'string' },
      cors: { type: 'string', multiple: true },
      token: { type: 'string' },
      a2a: { type: 'boolean', default: false },
      'push-host': { type: 'string', multiple: true },
      ...MODEL_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const port = values.port === '0' ? 0 : positiveInteger(values.port, '--port', 8787);
  const host = values.host ?? '127.0.0.1';
  const token = values.token ?? process.env.AGENTLOOP_SERVE_TOKEN;
  if (token !== undefined && token.trim() === '') throw new UsageError('--token must not be empty');
  const served = await loadServedAgent(values, io);
  const { cliAgent, say, options, connection, store: opened } = served;
  const closers: (() => Promise<void>)[] = [() => served.close()];
  try {
    if (values['push-host'] && !values.a2a) throw new UsageError('--push-host needs --a2a');
    const serverOptions = {
      agent: () => options,
      store: opened.store,
      host,
      port,
      ...(token ? { auth: { token } } : {}),
      ...(values.cors ? { cors: values.cors } : {}),
      page: true,
    };
    const start = values.a2a
      ? import('./serve-a2a.js').catch(a2aSdkMissing).then((m) =>
          m.startAgentAndA2aServer(serverOptions, {
            name: cliAgent.definition.name,
            description: cliAgent.definition.description,
            ...(values['push-host'] ? { pushHosts: values['push-host'] } : {}),
          }),
        )
      : startAgentServer(serverOptions);
    const server = await start.catch((error: unknown) => {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    });
    closers.push(() => server.close());
    say(
      `agentloop serve (pid ${process.pid}): ${cliAgent.name} on ${opened.description}; model: ${connection.description}`,
    );
    say(
      `AG-UI endpoint: ${server.url}/agents/default/runs${token ? ' (Authorization: Bearer <token>)' : ''}. Ctrl-C stops.`,
    );
    say(`chat page: ${server.url}/${token ? '#token=<token>' : ''}`);
    if (values.a2a)
      say(`A2A: card at ${server.url}/.well-known/agent-card.json, JSON-RPC at ${server.url}/a2a`);
    io.stdout(`${server.url}\n`);
    await untilInterrupted(signal);
    say('stopping: letting the runs come to rest');
    return 0;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}
