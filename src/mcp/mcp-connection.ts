import { createRequire } from 'node:module';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULTS } from '../defaults.js';
import { abortableSleep } from '../llm/retry-policy.js';
import type { ToolProgress } from '../tools/define-tool.js';
import { isHttpServer, type McpServerConfig } from './mcp-config.js';
import { StoredOAuthProvider } from './mcp-oauth-provider.js';
import { authCheckedFetch } from './mcp-oauth-urls.js';
import { mcpResultText } from './mcp-result.js';
import { loadMcpSdk, type McpSdk, mcpSdk } from './mcp-sdk.js';
import type { McpServerState } from './mcp-server-state.js';
import { McpSignInRequired } from './mcp-sign-in-required.js';
import { StderrTail } from './mcp-stderr-tail.js';
import { type McpToolDefinition, progressOfNotification, toolDefinitions } from './mcp-tool.js';
import { answeredAsSseServer, httpTransport, stdioTransport, transportKinds } from './mcp-transport.js';

/** What a connection tells its owner and how long it waits. */
export interface McpConnectionOptions {
  /** The server's tools, each time they are listed (at start, after `tools/list_changed`, after a restart). */
  onTools(tools: McpToolDefinition[]): void;
  /** A list refresh after `tools/list_changed` failed, a sign-in that failed. */
  onRefreshFailed(message: string): void;
  /** A sign-in finished and the server started with its tools listed. */
  onSignedIn?: () => void;
  /** A remote server's OAuth provider (none: no sign-in; requests carry only the configured headers). */
  auth?: OAuthClientProvider | undefined;
  /** The agent's tool timeout: the SDK's own request timeout is set past it, so the agent's fires first. */
  toolTimeoutMs: number;
  /** Time to start and list tools (default `DEFAULTS.mcpStartTimeoutMs`). */
  startTimeoutMs?: number;
}

/** A tool's own failure (`isError: true`): its text is what the model reads. */
export class McpToolError extends Error {
  override readonly name = 'McpToolError';
}

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
  /** The transport that last connected (a remote server without `type` may have fallen back to SSE). */
  transport: 'stdio' | 'http' | 'sse' | undefined;
  #client: Client | undefined;
  #transport: Transport | undefined;
  #starting: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #failures = 0;
  #lastFailureAt = 0;
  #downReason = '';
  readonly #stderr = new StderrTail();

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
    return this.#stderr.last(lines);
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
    let sdk: McpSdk;
    try {
      sdk = await loadMcpSdk();
    } catch (error) {
      if ((this.#state as McpServerState) !== 'closed') this.#state = 'failed';
      this.#failed();
      throw new Error(`MCP server "${this.name}" failed to start: ${text(error)}`);
    }
    const config = this.config;
    await this.#refreshIfExpiring();
    const timeout = this.options.startTimeoutMs ?? DEFAULTS.mcpStartTimeoutMs;
    const kinds = isHttpServer(config) ? transportKinds(config) : (['stdio'] as const);
    for (const [i, kind] of kinds.entries()) {
      const client = this.#newClient(sdk);
      const transport =
        kind === 'stdio'
          ? stdioTransport(config as Parameters<typeof stdioTransport>[0], (chunk) =>
              this.#stderr.keep(chunk),
            )
          : httpTransport(config as Parameters<typeof httpTransport>[0], kind, this.options.auth, this.name);
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
        this.transport = kind;
        return;
      } catch (error) {
        this.#client = undefined;
        this.#transport = undefined;
        await client.close().catch(() => {});
        // An older server answers the Streamable HTTP initialize with a 4xx: it speaks HTTP+SSE.
        if (kind === 'http' && i < kinds.length - 1 && answeredAsSseServer(error)) continue;
        if (this.#awaitSignIn(error, transport)) return;
        if ((this.#state as McpServerState) !== 'closed') this.#state = 'failed';
        this.#failed();
        const signIn = signInRequired(error);
        if (signIn) throw signIn;
        throw new Error(
          this.#scrub(`MCP server "${this.name}" failed to start: ${text(error)}${this.#stderr.note()}`),
        );
      }
    }
  }

  /** A client whose tool-list changes are read again and whose close marks the server down. */
  #newClient(sdk: McpSdk): Client {
    const client = new sdk.Client({ name: 'agentloop', version }, { capabilities: {} });
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
      const refresh = this.#list(client).catch((error: unknown) =>
        this.options.onRefreshFailed(
          this.#scrub(
            `MCP server "${this.name}": the tool list changed but could not be read again: ${text(error)}`,
          ),
        ),
      );
      this.#refreshing = refresh.finally(() => {
        if (this.#refreshing === refresh) this.#refreshing = undefined;
      });
    });
    client.onclose = () => {
      if (this.#client === client && this.#state !== 'closed') this.#markDown('its connection closed');
    };
    return client;
  }

  /**
   * When `error` is the SDK's "unauthorized" after it sent the user to sign in (our provider then
   * waits for the browser), the server waits in `signin`: once the code comes back it is exchanged
   * (`finishAuth`) and the server started again, its tools listed. True when that is so.
   */
  #awaitSignIn(error: unknown, transport: Transport): boolean {
    const provider = this.options.auth;
    const code = provider instanceof StoredOAuthProvider ? provider.pendingCode() : undefined;
    if (!code || !(error instanceof mcpSdk().UnauthorizedError) || this.#state === 'closed') return false;
    this.#state = 'signin';
    const finish = (transport as { finishAuth?: (code: string) => Promise<void> }).finishAuth;
    void code
      .then((value) => finish!.call(transport, value))
      .finally(() => (provider as StoredOAuthProvider).endSignIn())
      .then(() => {
        if (this.#state === 'signin') {
          this.#state = 'idle';
          return this.start().then(() => this.options.onSignedIn?.());
        }
      })
      .catch((failure: unknown) => {
        if (this.#state === 'closed') return;
        if (this.#state === 'signin') this.#state = 'failed';
        this.options.onRefreshFailed(this.#scrub(`MCP server "${this.name}": ${text(failure)}`));
      });
    return true;
  }

  /** Refreshes a stored access token that expires within a minute, before it is sent. */
  async #refreshIfExpiring(): Promise<void> {
    const provider = this.options.auth;
    const config = this.config;
    if (!(provider instanceof StoredOAuthProvider) || !isHttpServer(config)) return;
    const fetchFn = authCheckedFetch(this.name, config.url);
    await provider.refreshIfExpiring(() => mcpSdk().auth(provider, { serverUrl: config.url, fetchFn }));
  }

  /** `message` without any token of this server's provider. */
  #scrub(message: string): string {
    const provider = this.options.auth;
    return provider instanceof StoredOAuthProvider ? provider.scrub(message) : message;
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
    if (this.#state === 'ready' && this.#client) {
      await this.#refreshIfExpiring();
      return this.#client;
    }
    if (this.#state === 'closed') throw new Error(`MCP server "${this.name}" is closed`);
    if (this.#state === 'signin') {
      throw new Error(
        `MCP server "${this.name}" is waiting for you to sign in (open the link agentloop printed)`,
      );
    }
    const wait = this.restartDelay();
    if (wait > 0) await abortableSleep(wait, signal);
    try {
      await this.start();
    } catch (error) {
      if (signInRequired(error)) throw error;
      throw new Error(
        `${text(error)} (tried again on the next call, in ${Math.ceil(this.restartDelay() / 100) / 10} s or later)`,
      );
    }
    if ((this.#state as McpServerState) === 'signin') {
      throw new Error(`MCP server "${this.name}" needs you to sign in: open the link agentloop printed`);
    }
    if (!this.#client) throw new Error(`MCP server "${this.name}" did not start`);
    return this.#client;
  }

  /**
   * Calls a tool and returns the text the model reads. A tool's own failure (`isError`) throws a
   * {@link McpToolError} with its text; a server that stops during the call throws an error saying so.
   * `signal` aborts the call (the SDK sends the server a cancellation); `progress` hears the server's
   * progress notifications for it.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    progress?: (report: ToolProgress) => void,
  ): Promise<string> {
    const client = await this.#ready(signal);
    let result: Parameters<typeof mcpResultText>[0];
    try {
      result = (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        // The SDK sends a progress token; the server's notifications for this call come back here.
        ...(progress ? { onprogress: (params: unknown) => progress(progressOfNotification(params)) } : {}),
        // Past the agent's own timeout, which aborts `signal` first with its usual message.
        timeout: this.options.toolTimeoutMs + 1_000,
      })) as Parameters<typeof mcpResultText>[0];
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      const transport = this.#transport;
      if (transport && this.#client === client && this.#awaitSignIn(error, transport)) {
        this.#client = undefined;
        this.#transport = undefined;
        void client.close().catch(() => {});
        throw new Error(
          `MCP server "${this.name}" needs you to sign in again: open the link agentloop printed`,
        );
      }
      const signIn = signInRequired(error);
      if (signIn) throw signIn;
      // Another call met the same 401 at once (or lost its connection to that sign-in): it waits too.
      if (this.#state === 'signin')
        throw new Error(
          `MCP server "${this.name}" needs you to sign in again: open the link agentloop printed`,
        );
      const { McpError, ErrorCode } = mcpSdk();
      const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
      if (closed || this.#client !== client) {
        if (this.#client === client) this.#markDown('its connection closed');
        throw new Error(
          `MCP server "${this.name}" stopped during the call (${this.#downReason || 'connection closed'}); ` +
            `it is started again on the next call${this.#stderr.note()}`,
        );
      }
      throw new Error(this.#scrub(`MCP server "${this.name}": ${text(error)}`));
    }
    this.#failures = 0;
    const { text: shown, isError } = mcpResultText(result);
    // A server that echoes its own token back would put it in the transcript.
    const content = this.#scrub(shown);
    if (isError) throw new McpToolError(content || `the tool "${tool}" failed without a message`);
    return content;
  }

  /** Ends the connection: the child process exits (stdin closed, then SIGTERM, then SIGKILL), an HTTP session ends. */
  async close(): Promise<void> {
    this.#state = 'closed';
    if (this.options.auth instanceof StoredOAuthProvider)
      this.options.auth.endSignIn('the server was closed');
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

/** The {@link McpSignInRequired} behind `error` (the SDK may wrap it), if any. */
function signInRequired(error: unknown): McpSignInRequired | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof McpSignInRequired) return e;
  }
  return undefined;
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
