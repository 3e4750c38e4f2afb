import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AgentRuntimeOptions, AgentSource } from '../agent-source.js';
import { scrubForClient } from '../client-text.js';
import { LOCAL_PRINCIPAL } from '../request-auth.js';
import { MemorySessionStore, type SessionStore } from '../session-imports.js';
import { askArgsOf } from './ask-args.js';
import { askOutputSchema, askRefusal } from './ask-result.js';
import { type AskTarget, runAsk } from './ask-turn.js';
import { type OwnToolCall, registerOwnTools } from './own-tool-calls.js';
import { RunningSessions } from './running-sessions.js';

/** What `createMcpServer` takes. */
export interface McpAgentServerOptions {
  /** The agent to serve as the tool `ask_<name>` (`name`, else the definition's name, else `agent`). */
  agent?: AgentSource;
  /** The single agent's name (its tool is `ask_<name>`). */
  name?: string;
  /** Agents by name: one tool `ask_<name>` each. */
  agents?: Record<string, AgentSource>;
  /** Where sessions live (default: in memory, gone with the process). */
  store?: SessionStore;
  /** `createAgent` options for every agent unless its source sets them (the model connection). */
  runtime?: AgentRuntimeOptions;
  /** Tools whose calls run without asking (on top of each agent's own approval policy). */
  allow?: readonly string[];
  /** The longest `message` a call may carry, in characters (default 200,000). */
  maxMessageChars?: number;
  /** How long an approval question waits for the client (default 10 min); then the turn is interrupted. */
  approvalTimeoutMs?: number;
  /** The principal the sessions belong to (default `local`; the HTTP server sets the caller's). */
  principal?: string;
  /** The server's name and version in the MCP handshake (default `agentloop`, the package's). */
  serverInfo?: { name: string; version: string };
  /**
   * How often a turn looks at its session's inbox (default 200 ms): an entry another process sharing
   * the store has for the session (an A2A push config set there) is written by the turn.
   */
  pollMs?: number;
}

/**
 * The arguments of `ask_<agent>`, as `tools/list` shows them (calls are checked by `askArgsOf`). An
 * object schema, not a raw shape: the SDK builds an object schema from a raw shape on every call.
 */
const askInputSchema = z.object({
  message: z.string().describe('What to say to the agent'),
  session: z
    .string()
    .optional()
    .describe('The session to continue (from an earlier answer); leave it out to start a new one'),
});

/** The defaults of the options above. */
const DEFAULT_MAX_MESSAGE_CHARS = 200_000;
const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_POLL_MS = 200;

/**
 * An MCP server (the SDK's `McpServer`) offering each agent as a tool `ask_<agent>` (docs/mcp-server.md):
 * `message` and an optional `session` in, the answer as text and structured content out; progress
 * while the turn runs, the client's cancel (or an interrupt posted to the session's inbox) as an
 * interrupt, approvals as elicitations. Connect it to any transport (`StdioServerTransport`;
 * `startMcpHttpServer` serves Streamable HTTP); tools added with its `registerTool` sit beside the
 * agents. The `ask_` calls skip `McpServer`'s schema checks (own-tool-calls.ts); over stdio,
 * `withAskLane` answers them below the SDK's `Protocol` (own-call-lane.ts).
 */
export function createMcpServer(
  options: McpAgentServerOptions,
  running: RunningSessions = new RunningSessions(),
): McpServer {
  // No `tools` capability here: McpServer installs its tool handlers at the first registerTool, which
  // registerOwnTools needs to see (own-tool-calls.ts).
  const server = new McpServer(options.serverInfo ?? { name: 'agentloop', version: '1' });
  const store = options.store ?? new MemorySessionStore();
  const principal = options.principal ?? LOCAL_PRINCIPAL;
  const targets = [...agentsOf(options)].map(
    ([name, source]): AskTarget => ({
      name,
      toolName: askToolName(name),
      source,
      store,
      runtime: options.runtime ?? {},
      allow: new Set(options.allow ?? []),
      maxMessageChars: options.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS,
      approvalTimeoutMs: options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
      running,
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
    }),
  );
  // One registration: McpServer lists the ask_ tools with their schemas; their calls skip its schema
  // checks, and the stdio lane (withAskLane) answers them from the same list.
  registerOwnTools(
    server,
    targets.map((target) => ({
      name: target.toolName,
      config: {
        title: `Ask ${target.name}`,
        description: describe(target.name, target.source),
        inputSchema: askInputSchema,
        outputSchema: askOutputSchema,
        annotations: { readOnlyHint: false, openWorldHint: true },
      },
      call: askCall(server, target, principal),
    })),
  );
  return server;
}

/** One `ask_<agent>` call: its arguments checked, the turn run with the request's progress, cancel and elicitation. */
function askCall(server: McpServer, target: AskTarget, principal: string): OwnToolCall {
  return async (raw, extra) => {
    const args = askArgsOf(raw);
    if ('problem' in args) return askRefusal(target.toolName, args.problem);
    const token = extra._meta?.progressToken;
    let progress = 0;
    const canElicit = server.server.getClientCapabilities()?.elicitation?.form !== undefined;
    try {
      return await runAsk(target, args, {
        principal,
        signal: extra.signal,
        progress:
          token === undefined
            ? undefined
            : (message) => {
                progress += 1;
                extra
                  .sendNotification({
                    method: 'notifications/progress',
                    params: { progressToken: token, progress, message },
                  })
                  .catch(() => {}); // a client gone away misses its progress; the turn goes on
              },
        elicit: canElicit
          ? (params, timeout) =>
              extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, {
                signal: extra.signal,
                timeout,
              })
          : undefined,
      });
    } catch (error) {
      // What McpServer would make of a throw: a tool error (runAsk refuses what it foresees itself).
      return askRefusal(
        target.toolName,
        scrubForClient(error instanceof Error ? error.message : String(error)),
      );
    }
  };
}

/** The tool an agent is served as: `ask_<name>`, with what MCP tool names may not hold replaced by `_`. */
export function askToolName(name: string): string {
  return `ask_${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 128);
}

function agentsOf(options: McpAgentServerOptions): Map<string, AgentSource> {
  const agents = new Map(Object.entries(options.agents ?? {}));
  if (options.agent) agents.set(options.name ?? nameOf(options.agent) ?? 'agent', options.agent);
  if (agents.size === 0) throw new Error('createMcpServer: give `agent` or `agents`');
  const tools = new Map<string, string>();
  for (const name of agents.keys()) {
    const tool = askToolName(name);
    const other = tools.get(tool);
    if (other !== undefined)
      throw new Error(`createMcpServer: agents "${other}" and "${name}" would both be the tool ${tool}`);
    tools.set(tool, name);
  }
  return agents;
}

function nameOf(source: AgentSource): string | undefined {
  if (typeof source === 'function') return undefined;
  if ('definition' in source && 'bundleRoot' in source) return source.id;
  return source.name;
}

function describe(name: string, source: AgentSource): string {
  const own =
    typeof source === 'function'
      ? undefined
      : 'definition' in source && 'bundleRoot' in source
        ? source.definition.description
        : source.description;
  return [
    `Sends a message to the agent "${name}" and returns its answer.`,
    own ? `The agent: ${own}` : undefined,
    'Pass the `session` from an answer to continue that conversation; leave it out to start a new one.',
  ]
    .filter(Boolean)
    .join(' ');
}
