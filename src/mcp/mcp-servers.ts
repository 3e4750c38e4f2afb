import { DEFAULTS } from '../defaults.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { McpAuthOptions } from './mcp-auth.js';
import type { McpAuthStore } from './mcp-auth-store.js';
import type { McpServersConfig } from './mcp-config.js';
import { McpServerConnection } from './mcp-connection.js';
import { authProviderFor, authStoreOf } from './mcp-oauth-provider.js';
import type { McpServerState } from './mcp-server-state.js';
import { type McpToolDefinition, mcpTool } from './mcp-tool.js';

/** What the servers report and how long calls may take. */
export interface McpServersOptions {
  /** The agent's tools: each server's tools are added, replaced when its list changes, removed when gone. */
  registry: ToolRegistry;
  /** A server that failed to start, a tool left out, a refresh that failed: for the agent's `error` event. */
  report(message: string): void;
  /** The agent's tool timeout (`limits.toolTimeoutMs`, default `DEFAULTS.toolTimeoutMs`). */
  toolTimeoutMs?: number;
  /** Time a server has to start and list its tools (default `DEFAULTS.mcpStartTimeoutMs`). */
  startTimeoutMs?: number;
  /** How remote servers sign in (OAuth): where tokens live, how the user is sent to sign in. */
  auth?: McpAuthOptions;
  /** Told every OAuth token as it is read or obtained (the agent's redactor learns it). */
  secret?: (value: string) => void;
}

/** One server as UIs show it (`/tools` in chat). */
export interface McpServerStatus {
  name: string;
  state: McpServerState;
  /** How it was reached, once it was: `stdio`, `http` (Streamable HTTP) or `sse` (the older HTTP+SSE). */
  transport?: 'stdio' | 'http' | 'sse';
  /** The names its tools are offered under. */
  tools: string[];
}

/**
 * The MCP servers of one agent: started together, their tools kept in the agent's registry as
 * `<server>__<tool>`, refreshed when a server says its list changed, closed together.
 */
export class McpServers {
  readonly #connections: McpServerConnection[];
  /** Registry names per server. */
  readonly #offered = new Map<string, string[]>();
  readonly #options: McpServersOptions;
  #closed = false;

  constructor(config: McpServersConfig, options: McpServersOptions) {
    this.#options = options;
    let store: McpAuthStore | undefined;
    const auth = options.auth ?? {};
    this.#connections = Object.entries(config).map(
      ([name, server]) =>
        new McpServerConnection(name, server, {
          auth: authProviderFor(name, server, auth, () => (store ??= authStoreOf(auth)), options.secret),
          toolTimeoutMs: options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs,
          ...(options.startTimeoutMs !== undefined ? { startTimeoutMs: options.startTimeoutMs } : {}),
          onTools: (tools) => this.#offer(name, server.approval ?? 'readonly', tools),
          onRefreshFailed: (message) => options.report(message),
          onSignedIn: () => auth.signedIn?.(name, this.#offered.get(name)?.length ?? 0),
        }),
    );
  }

  /**
   * Starts every server in parallel; resolves when each has listed its tools or failed. A server
   * that fails is reported (its name and the last lines of its stderr) and the others go on.
   */
  async start(): Promise<void> {
    await Promise.all(
      this.#connections.map((c) =>
        c.start().catch((error: unknown) => {
          if (!this.#closed) this.#options.report(error instanceof Error ? error.message : String(error));
        }),
      ),
    );
  }

  /** Waits for tool lists that servers said changed, so the next model call sees the new ones. */
  async settle(): Promise<void> {
    const pending = this.#connections.flatMap((c) => (c.refreshing ? [c.refreshing] : []));
    if (pending.length > 0) await Promise.all(pending);
  }

  /** Every server, its state and the names of its tools. */
  get servers(): McpServerStatus[] {
    return this.#connections.map((c) => ({
      name: c.name,
      state: c.state,
      ...(c.transport ? { transport: c.transport } : {}),
      tools: [...(this.#offered.get(c.name) ?? [])],
    }));
  }

  /** The server a registry name belongs to, if it is an MCP tool. */
  serverOf(toolName: string): string | undefined {
    for (const [server, names] of this.#offered) if (names.includes(toolName)) return server;
    return undefined;
  }

  /** Closes every server (stdio servers' processes end); calls after this fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#connections.map((c) => c.close()));
  }

  /** Puts a server's listed tools in the registry in place of its previous ones. */
  #offer(server: string, approval: 'always' | 'never' | 'readonly', tools: McpToolDefinition[]): void {
    const { registry } = this.#options;
    for (const name of this.#offered.get(server) ?? []) registry.remove(name);
    const connection = this.#connections.find((c) => c.name === server)!;
    const names: string[] = [];
    for (const definition of tools) {
      try {
        const tool = mcpTool(server, definition, approval, (name, args, signal, progress) =>
          connection.callTool(name, args, signal, progress),
        );
        if (registry.has(tool.name)) {
          throw new Error(`another tool is already called "${tool.name}"`);
        }
        registry.add(tool);
        names.push(tool.name);
      } catch (error) {
        this.#options.report(
          `MCP server "${server}": tool "${definition.name}" left out: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    this.#offered.set(server, names);
  }
}
