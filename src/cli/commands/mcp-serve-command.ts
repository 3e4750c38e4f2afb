import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  askToolName,
  createMcpServer,
  McpStdioServerTransport,
  startMcpHttpServer,
  withAskLane,
} from '../../server/mcp/index.js';
import { RunningSessions } from '../../server/mcp/running-sessions.js';
import { AGENT_FLAG_OPTIONS, loadServedAgent, SKILLS_USAGE } from '../cli-agent.js';
import { cliApprovalPolicy } from '../cli-approvals.js';
import { parseFlags, positiveInteger, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { MCP_CONFIG_FLAG } from '../flags/mcp-config-flag.js';
import { STORE_FLAG_OPTIONS } from '../flags/store-flag.js';
import { MODEL_FLAG_OPTIONS } from '../model/model-connection.js';
import { packageRoot } from '../package-root.js';
import { untilInterrupted } from '../until-interrupted.js';

export const MCP_SERVE_USAGE = `Usage: agentloop mcp serve --bundle <root> --agent <id> [options]
       agentloop mcp serve --skills <dir> | --mcp-config <file> [options]
  Serves the agent as an MCP server (docs/mcp-server.md): one tool, ask_<agent>, with a message and
  an optional session; the answer comes back as text and structured content. Over stdio (what
  Claude Code, Cursor and VS Code start) unless --http is given. Sessions live in the store.
  --http <port>         serve Streamable HTTP at http://<host>:<port>/mcp instead (0 picks a port)
  --host <host>         where --http listens (default 127.0.0.1); anything else needs --token
  --token <bearer>      HTTP callers must send Authorization: Bearer <token> (or AGENTLOOP_SERVE_TOKEN)
  --yes                 the agent's tool calls run without asking
  --allow <tool>        calls of this tool run without asking (repeat). Other calls that need approval
                        are asked as an MCP elicitation; a client without elicitation gets a tool error
  --store <url-or-dir>  a postgres:// URL (--schema <name>) or a sessions folder (default: the
                        sessions folder, .agentloop/sessions or $AGENTLOOP_HOME/sessions)
  --project <dir> --bundle <root> --agent <id> --output <dir>   the agent, as for run and chat
${SKILLS_USAGE}  --mcp-config <file>   an mcp.json: its servers' tools join the agent's
  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
                        the model (default: OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL; with none,
                        the bundle's scripted demo when it ships one)
  Over stdio nothing but MCP is written to stdout; notes go to stderr.
Exit codes: 0 stopped (stdin closed, Ctrl-C, SIGTERM), 1 could not start, 2 bad flags.
`;

/** `agentloop mcp serve`: the agent as an MCP server, over stdio or Streamable HTTP (agentloop/server). */
export async function runMcpServeCommand(
  args: string[],
  io: CommandIo,
  signal?: AbortSignal,
): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      ...STORE_FLAG_OPTIONS,
      ...AGENT_FLAG_OPTIONS,
      ...MCP_CONFIG_FLAG,
      http: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      yes: { type: 'boolean', default: false },
      allow: { type: 'string', multiple: true },
      ...MODEL_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(MCP_SERVE_USAGE);
    return 0;
  }
  const http =
    values.http === undefined
      ? undefined
      : values.http === '0'
        ? 0
        : positiveInteger(values.http, '--http', 0);
  if (http === undefined && (values.host !== undefined || values.token !== undefined)) {
    throw new UsageError('--host and --token are for --http <port>; stdio has no network side');
  }
  const host = values.host ?? '127.0.0.1';
  const token = values.token ?? (http !== undefined ? process.env.AGENTLOOP_SERVE_TOKEN : undefined);
  if (token !== undefined && token.trim() === '') throw new UsageError('--token must not be empty');
  const allow = values.allow ?? [];
  for (const name of allow) if (name.trim() === '') throw new UsageError('--allow needs a tool name');
  const loaded = await loadServedAgent(values, io, { approval: cliApprovalPolicy(values.yes) });
  const { cliAgent, say, options, connection, store: opened } = loaded;
  const closers: (() => Promise<void>)[] = [() => loaded.close()];
  try {
    // The tool is named after --agent as given (its file name without .md), or `assistant`.
    const name = values.agent ? path.basename(values.agent).replace(/\.md$/, '') : cliAgent.name;
    const served = {
      name,
      agent: () => options,
      store: opened.store,
      allow,
      serverInfo: { name: 'agentloop', version: packageVersion() },
    };
    const tool = askToolName(name);
    if (http !== undefined) {
      const server = await startMcpHttpServer({
        ...served,
        host,
        port: http,
        ...(token ? { auth: { token } } : {}),
      }).catch((error: unknown) => {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      });
      closers.push(() => server.close());
      say(
        `agentloop mcp serve (pid ${process.pid}): ${tool} on ${opened.description}; model: ${connection.description}`,
      );
      say(
        `MCP endpoint (Streamable HTTP): ${server.url}${token ? ' (Authorization: Bearer <token>)' : ''}. Ctrl-C stops.`,
      );
      io.stdout(`${server.url}\n`);
      await untilInterrupted(signal);
      say('stopping: letting the turns come to rest');
      return 0;
    }
    const running = new RunningSessions();
    const server = createMcpServer(served, running);
    // ask_ calls are answered below the SDK's Protocol (own-call-lane.ts); the rest goes through it.
    const transport = withAskLane(server, new McpStdioServerTransport());
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      process.stdin.once('end', () => resolve());
    });
    await server.connect(transport);
    closers.push(async () => {
      await server.close(); // an open approval question ends: its turn comes to rest interrupted
      await running.idle();
    });
    say(
      `agentloop mcp serve (pid ${process.pid}): ${tool} over stdio on ${opened.description}; model: ${connection.description}`,
    );
    const stop = new AbortController();
    closed.then(() => stop.abort());
    signal?.addEventListener('abort', () => stop.abort(), { once: true });
    await untilInterrupted(stop.signal);
    return 0;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

function packageVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return String(manifest.version);
  } catch {
    return '0';
  }
}
