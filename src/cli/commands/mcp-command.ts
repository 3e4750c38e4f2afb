import { McpAuthStore } from '../../mcp/mcp-auth-store.js';
import { isHttpServer, type McpServerConfig, type McpServersConfig } from '../../mcp/mcp-config.js';
import { type McpServerStatus, McpServers } from '../../mcp/mcp-servers.js';
import { ToolRegistry } from '../../tools/tool-registry.js';
import { projectFolder } from '../cli-agent.js';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { MCP_CONFIG_FLAG, mcpServersFlag } from '../flags/mcp-config-flag.js';
import { authDirBeside, projectAuthDir, terminalSignIn } from '../flags/mcp-sign-in.js';
import { terminalSafe, terminalSafeJson } from '../terminal/terminal-safe.js';

const USAGE = `Usage: agentloop mcp list [--mcp-config <file>]... [--project <dir>] [--json]
       agentloop mcp login <server> [--mcp-config <file>]... [--project <dir>]
       agentloop mcp logout <server> [--mcp-config <file>]... [--project <dir>]
       agentloop mcp serve --bundle <root> --agent <id> [--http <port>] [--yes] [--allow <tool>]...
  serve    the agent as an MCP server (stdio, or Streamable HTTP): see agentloop mcp serve --help
  The MCP servers of the project's .mcp.json and the --mcp-config files (as run and chat read them).
  list     each server: its transport, whether it is signed in, how many tools it offers (each is started)
  login    signs in to a remote server (OAuth): prints the link to open, waits for the browser to come back
  logout   forgets the server's tokens and client registration
  Tokens are kept in <project>/.agentloop/auth ($AGENTLOOP_HOME/auth; beside --sessions-dir), mode 0600.
  --sessions-dir <dir>  the sessions folder whose sibling auth/ holds the tokens
  --timeout <s>         how long login waits for the browser (default 300)
`;

/** `agentloop mcp list|login|logout|serve`: remote servers' sign-in, what each server offers; the agent as a server. */
export async function runMcpCommand(args: string[], io: CommandIo): Promise<number> {
  if (args[0] === 'serve') {
    const serve = await import('./mcp-serve-command.js').catch((error: unknown) => {
      if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
      throw new Error(
        'agentloop mcp serve needs the optional dependency @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk',
      );
    });
    return serve.runMcpServeCommand(args.slice(1), io);
  }
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      ...MCP_CONFIG_FLAG,
      project: { type: 'string' },
      'sessions-dir': { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [action, name, ...extra] = positionals;
  if (values.help || !action) {
    io.stdout(USAGE);
    return values.help ? 0 : 2;
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const projectRoot = projectFolder(values.project);
  const { servers } = await mcpServersFlag(values['mcp-config'], projectRoot);
  const dir = values['sessions-dir'] ? authDirBeside(values['sessions-dir']) : projectAuthDir(projectRoot);
  if (action === 'list') {
    if (name) throw new UsageError(`unexpected argument "${name}"`);
    return list(servers, dir, values.json, io);
  }
  if (action !== 'login' && action !== 'logout') throw new UsageError(`unknown action "${action}"`);
  if (!name)
    throw new UsageError(`missing the server to ${action === 'login' ? 'sign in to' : 'sign out of'}`);
  const server = servers[name];
  if (!server) {
    const known = Object.keys(servers);
    io.stderr(
      `agentloop mcp: no server "${terminalSafe(name)}" (${known.length > 0 ? `known: ${known.join(', ')}` : 'no .mcp.json or --mcp-config servers'})\n`,
    );
    return 1;
  }
  if (!isHttpServer(server)) {
    io.stderr(`agentloop mcp: "${name}" is a local (stdio) server: it has no sign-in\n`);
    return 1;
  }
  if (action === 'logout') {
    const removed = await new McpAuthStore(dir).remove(server.url);
    io.stdout(removed ? `signed out of ${name}\n` : `${name}: not signed in\n`);
    return 0;
  }
  const seconds = Number(values.timeout ?? 300);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError('--timeout needs a number of seconds above 0');
  return login(name, server, dir, seconds * 1000, io);
}

async function login(name: string, server: McpServerConfig, dir: string, ms: number, io: CommandIo) {
  const problems: string[] = [];
  const servers = new McpServers(
    { [name]: server },
    {
      registry: new ToolRegistry([]),
      report: (message) => problems.push(message),
      auth: { dir, signIn: terminalSignIn((line) => io.stderr(`${terminalSafe(line)}\n`)) },
    },
  );
  try {
    await servers.start();
    const end = Date.now() + ms;
    let status = servers.servers[0]!;
    while (status.state === 'signin' || status.state === 'starting') {
      if (Date.now() > end) {
        io.stderr(`agentloop mcp: no sign-in came back within ${Math.round(ms / 1000)} s\n`);
        return 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = servers.servers[0]!;
    }
    if (status.state !== 'ready') {
      io.stderr(`${terminalSafe(problems.join('\n') || `MCP server "${name}" did not start`)}\n`);
      return 1;
    }
    io.stdout(`signed in to ${name} (${status.tools.length} tools)\n`);
    return 0;
  } finally {
    await servers.close();
  }
}

/** Every server started (without sign-in), then one row each. */
async function list(config: McpServersConfig, dir: string, json: boolean, io: CommandIo): Promise<number> {
  const problems = new Map<string, string>();
  const servers = new McpServers(config, {
    registry: new ToolRegistry([]),
    report: (message) => {
      const server = /^MCP server "([^"]+)"/.exec(message)?.[1];
      if (server && !problems.has(server)) problems.set(server, message);
    },
    auth: { dir },
  });
  const store = new McpAuthStore(dir);
  try {
    await servers.start();
    const rows = [];
    for (const status of servers.servers) {
      const server = config[status.name]!;
      rows.push({
        name: status.name,
        transport: transportOf(server, status),
        signIn: isHttpServer(server) ? await signInState(store, server.url, status) : 'none',
        state: status.state,
        tools: status.tools.length,
        ...(problems.has(status.name) ? { problem: problems.get(status.name) } : {}),
      });
    }
    if (json) {
      io.stdout(`${terminalSafeJson(rows)}\n`);
      return 0;
    }
    if (rows.length === 0)
      io.stdout('no MCP servers (add a .mcp.json to the project, or give --mcp-config)\n');
    for (const row of rows) {
      io.stdout(
        `${terminalSafe(`${row.name}  ${row.transport}  ${row.signIn}  ${row.state}, ${row.tools} tools`)}\n`,
      );
      if (row.problem) io.stdout(`  ${terminalSafe(row.problem)}\n`);
    }
    return 0;
  } finally {
    await servers.close();
  }
}

function transportOf(server: McpServerConfig, status: McpServerStatus): string {
  if (!isHttpServer(server)) return 'stdio';
  if (status.transport) return status.transport === 'sse' ? 'sse' : 'streamable-http';
  return server.type === 'sse' ? 'sse' : server.type === 'http' ? 'streamable-http' : 'http (or sse)';
}

async function signInState(store: McpAuthStore, url: string, status: McpServerStatus): Promise<string> {
  if ((await store.read(url))?.tokens) return 'signed in';
  if (status.state === 'ready') return 'no sign-in needed';
  return 'not signed in';
}
