import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpHttpServerConfig, McpStdioServerConfig } from './mcp-config.js';
import { authCheckedFetch } from './mcp-oauth-urls.js';
import { mcpSdk } from './mcp-sdk.js';

/** How a remote server is spoken to: Streamable HTTP, or the older HTTP+SSE transport. */
export type McpHttpTransportKind = 'http' | 'sse';

/** A stdio server's transport: its process started with `config`, its stderr handed to `onStderr`. */
export function stdioTransport(config: McpStdioServerConfig, onStderr: (chunk: string) => void): Transport {
  const { StdioClientTransport } = mcpSdk();
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    ...(config.env ? { env: config.env } : {}),
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer | string) => onStderr(String(chunk)));
  return transport;
}

/**
 * A remote server's transport of `kind`, with its headers and (when it signs in) the OAuth provider
 * and a fetch that refuses authorization servers off this machine without https.
 */
export function httpTransport(
  config: McpHttpServerConfig,
  kind: McpHttpTransportKind,
  authProvider: OAuthClientProvider | undefined,
  server = config.url,
): Transport {
  const { StreamableHTTPClientTransport, SSEClientTransport } = mcpSdk();
  const options = {
    requestInit: { headers: config.headers ?? {} },
    ...(authProvider ? { authProvider, fetch: authCheckedFetch(server, config.url) } : {}),
  };
  const url = new URL(config.url);
  // Both send `requestInit`'s headers with every request (the SSE stream's GET too).
  return kind === 'sse'
    ? new SSEClientTransport(url, options)
    : new StreamableHTTPClientTransport(url, options);
}

/** The transports to try for a remote server, in order: its `type`, or Streamable HTTP then SSE. */
export function transportKinds(config: McpHttpServerConfig): McpHttpTransportKind[] {
  return config.type ? [config.type] : ['http', 'sse'];
}

/**
 * Whether a failed Streamable HTTP start means the server speaks the older HTTP+SSE transport: its
 * initialize POST was answered with a 4xx other than 401 and 403 (those ask for sign-in), as the
 * MCP spec's backwards-compatibility section describes (404, 405, 400 from an SSE-only server).
 */
export function answeredAsSseServer(error: unknown): boolean {
  const { StreamableHTTPError } = mcpSdk();
  if (!(error instanceof StreamableHTTPError)) return false;
  const status = error.code ?? 0;
  return status >= 400 && status < 500 && status !== 401 && status !== 403;
}
