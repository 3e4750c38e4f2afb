import { createRequire } from 'node:module';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULTS } from '../defaults.js';
import { isHttpServer, type McpServerConfig } from './mcp-config.js';
import { mcpResultText } from './mcp-result.js';
import { loadMcpSdk, mcpSdk } from './mcp-sdk.js';
import { type McpToolDefinition, toolDefinitions } from './mcp-tool.js';

/** Where a server stands: starting, ready, down (it stopped; started again on next use), failed, closed. */
export type McpServerState = 'idle' | 'starting' | 'ready' | 'down' | 'failed' | 'closed';

/** What a connection tells its owner and how long it waits. */
export interface McpConnectionOptions {
  /** The server's tools, each time they are listed (at start, after `tools/list_changed`, after a restart). */
  onTools(tools: McpToolDefinition[]): void;
  /** A list refresh after `tools/list_changed` failed. */
  onRefreshFailed(message: string): void;
  /** The agent's tool timeout: the SDK's own request timeout is set past it, so the agent's fires first. */
  toolTimeoutMs: number;
  /** Time to start and list tools (default `DEFAULTS.mcpStartTimeoutMs`). */
  startTimeoutMs?: number;
}

/** A tool's own failure (`isError: true`): its text is what the model reads. */
export class McpToolError extends Error {
  override readonly name = 'McpToolError';
}

const STDERR_LINES = 20;
const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * One MCP server: its client over stdio (a child process) or Streamable HTTP, its tools, and its
 * lifecycle. A server that stops (its process exits, the connection drops) is `down`: calls in
 * flight fail with an error naming it, and the next call starts it again, after a backoff that grows
 * with each failure in a row (`DEFAULTS.mcpRestartBaseDelayMs`, doubled, at most
 * `DEFAULTS.mcpRestartMaxDelayMs`); a successful call resets it.
 */
export class McpServerConnection {
  #state: McpServerState = 'idle';
  #client: Client | undefined;
  #transport: Transport | undefined;
  #starting: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #failures = 0;
  #lastFailureAt = 0;
  #downReason = '';
  readonly #stderr: string[] = [];
  #stderrPartial = '';

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {}

  get state(): McpServerState {
    return this.#state;
  }

  /** The last lines the server wrote to stderr (stdio servers), oldest first. */
  stderrTail(lines = 10): string[] {
    const all = this.#stderrPartial ? [...this.#stderr, this.#stderrPartial] : this.#stderr;
    return all.slice(-lines);
  }

  /** Starts the server and lists its tools (once; a second call while starting waits for the first). */
  start(): Promise<void> {
    this.#starting ??= this.#connect().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /** A list refresh after `tools/list_changed` still under way, if any. */
  get refreshing(): Promise<void> | undefined {
    return this.#refreshing;
  }

  /** How long the next start waits: nothing after success, a growing backoff after failures. */
  restartDelay(now = Date.now()): number {
    if (this.#failures === 0) return 0;
    const backoff = Math.min(
      DEFAULTS.mcpRestartMaxDelayMs,
      DEFAULTS.mcpRestartBaseDelayMs * 2 ** (this.#failures - 1),
    );
    return Math.max(0, this.#lastFailureAt + backoff - now);
  }

  async #connect(): Promise<void> {
    if (this.#state === 'closed') throw new Error(`MCP server "${this.name}" is closed`);
    this.#state = 'starting';
    let sdk: Awaited<ReturnType<typeof loadMcpSdk>>;
    try {
      sdk = await loadMcpSdk();
    } catch (error) {
      if ((this.#state as McpServerState) !== 'closed') this.#state = 'failed';
      this.#failed();
      throw new Error(`MCP server "${this.name}" failed to start: ${text(error)}`);
    }
    const { Client, ToolListChangedNotificationSchema } = sdk;
    const transport = this.#makeTransport();
    const client = new Client({ name: 'agentloop', version }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      const refresh = this.#list(client).catch((error: unknown) =>
        this.options.onRefreshFailed(
          `MCP server "${this.name}": the tool list changed but could not be read again: ${text(error)}`,
        ),
      );
      this.#refreshing = refresh.finally(() => {
        if (this.#refreshing === refresh) this.#refreshing = undefined;
      });
    });
    client.onclose = () => {
      if (this.#client === client && this.#state !== 'closed') this.#markDown('its connection closed');
    };
    const timeout = this.options.startTimeoutMs ?? DEFAULTS.mcpStartTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      this.#client = client;
      this.#transport = transport;
      await this.#list(client, timeout);
      if ((this.#state as McpServerState) === 'closed') {
        await client.close().catch(() => {});
        return;
      }
      this.#state = 'ready';
    } catch (error) {
      this.#client = undefined;
      this.#transport = undefined;
      if ((this.#state as McpServerState) !== 'closed') this.#state = 'failed';
      this.#failed();
      await client.close().catch(() => {});
      throw new Error(`MCP server "${this.name}" failed to start: ${text(error)}${this.#stderrNote()}`);
    }
  }

  #makeTransport(): Transport {
    const { StdioClientTransport, StreamableHTTPClientTransport } = mcpSdk();
    const config = this.config;
    if (isHttpServer(config)) {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers ?? {} },
      });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      ...(config.env ? { env: config.env } : {}),
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer | string) => this.#keepStderr(String(chunk)));
    return transport;
  }

  #keepStderr(chunk: string): void {
    const lines = (this.#stderrPartial + chunk).split(/\r?\n/);
    this.#stderrPartial = (lines.pop() ?? '').slice(-2_000);
    for (const line of lines) if (line.trim() !== '') this.#stderr.push(line.slice(0, 2_000));
    if (this.#stderr.length > STDERR_LINES) this.#stderr.splice(0, this.#stderr.length - STDERR_LINES);
  }

  #stderrNote(): string {
    const tail = this.stderrTail(5);
    return tail.length > 0 ? `\nlast lines of its stderr:\n  ${tail.join('\n  ')}` : '';
  }

  /** Lists every page of tools and hands them to the owner. */
  async #list(client: Client, timeout?: number): Promise<void> {
    const listed: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, timeout ? { timeout } : {});
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && listed.length < 10_000);
    if (this.#client === client) this.options.onTools(toolDefinitions(listed));
  }

  #failed(): void {
    this.#failures++;
    this.#lastFailureAt = Date.now();
  }

  #markDown(reason: string): void {
    this.#state = 'down';
    this.#downReason = reason;
    this.#client = undefined;
    const transport = this.#transport;
    this.#transport = undefined;
    this.#failed();
    void transport?.close().catch(() => {});
  }

  /** The client to call through: started again (after its backoff) when the server is down. */
  async #ready(signal: AbortSignal): Promise<Client> {
    if (this.#starting) await this.#starting;
    if (this.#state === 'ready' && this.#client) return this.#client;
    if (this.#state === 'closed') throw new Error(`MCP server "${this.name}" is closed`);
    const wait = this.restartDelay();
    if (wait > 0) await sleep(wait, signal);
    try {
      await this.start();
    } catch (error) {
      throw new Error(
        `${text(error)} (tried again on the next call, in ${Math.ceil(this.restartDelay() / 100) / 10} s or later)`,
      );
    }
    if (!this.#client) throw new Error(`MCP server "${this.name}" did not start`);
    return this.#client;
  }

  /**
   * Calls a tool and returns the text the model reads. A tool's own failure (`isError`) throws a
   * {@link McpToolError} with its text; a server that stops during the call throws an error saying so.
   * `signal` aborts the call (the SDK sends the server a cancellation).
   */
  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const client = await this.#ready(signal);
    let result: Parameters<typeof mcpResultText>[0];
    try {
      result = (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        // Past the agent's own timeout, which aborts `signal` first with its usual message.
        timeout: this.options.toolTimeoutMs + 1_000,
      })) as Parameters<typeof mcpResultText>[0];
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      const { McpError, ErrorCode } = mcpSdk();
      const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
      if (closed || this.#client !== client) {
        if (this.#client === client) this.#markDown('its connection closed');
        throw new Error(
          `MCP server "${this.name}" stopped during the call (${this.#downReason || 'connection closed'}); ` +
            `it is started again on the next call${this.#stderrNote()}`,
        );
      }
      throw new Error(`MCP server "${this.name}": ${text(error)}`);
    }
    this.#failures = 0;
    const { text: content, isError } = mcpResultText(result);
    if (isError) throw new McpToolError(content || `the tool "${tool}" failed without a message`);
    return content;
  }

  /** Ends the connection: the child process exits (stdin closed, then SIGTERM, then SIGKILL), an HTTP session ends. */
  async close(): Promise<void> {
    this.#state = 'closed';
    const starting = this.#starting;
    if (starting) await starting.catch(() => {});
    const client = this.#client;
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    // A transport exists only once the SDK was loaded.
    const sdk = transport ? mcpSdk() : undefined;
    if (sdk && transport instanceof sdk.StreamableHTTPClientTransport) {
      await withTimeout(transport.terminateSession(), 2_000).catch(() => {});
    }
    // The SDK closes stdin and waits 2 s before SIGTERM; a server that has not exited half a second
    // after its stdin closed gets SIGTERM then (the MCP spec's shutdown, with a shorter wait).
    const pid = sdk && transport instanceof sdk.StdioClientTransport ? transport.pid : null;
    let closed = false;
    const closing = (client?.close() ?? Promise.resolve())
      .catch(() => {})
      .finally(() => {
        closed = true;
      });
    const timer =
      pid === null
        ? undefined
        : setTimeout(() => {
            if (closed) return;
            try {
              process.kill(pid, 'SIGTERM');
            } catch {
              // It exited meanwhile.
            }
          }, 500);
    await closing;
    clearTimeout(timer);
  }
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
