import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { defaultAuthDir, McpAuthStore } from './mcp-auth-store.js';
import { isHttpServer, type McpServerConfig } from './mcp-config.js';
import { StoredOAuthProvider } from './mcp-oauth-provider.js';

/**
 * How remote MCP servers sign in (OAuth). By default tokens and client registrations are kept per
 * server URL in the `auth/` folder beside the sessions folder, and a server that needs a sign-in is
 * reported (`agentloop mcp login <name>`) while the others run; give `signIn` to send the user to
 * the authorization page instead (the `chat` command prints the link).
 */
export interface McpAuthOptions {
  /** Where tokens are kept (default: `auth/` beside the sessions folder, see `defaultAuthDir`). */
  dir?: string;
  /**
   * Sends the user to `url` to sign in to `server` (print it, open a browser). The server's tools
   * appear once the browser comes back to agentloop's loopback redirect on 127.0.0.1.
   */
  signIn?: (server: string, url: URL) => void;
  /** Your own OAuth client providers, by server name (agentloop's is not used for those). */
  providers?: Record<string, OAuthClientProvider>;
}

/** The MCP SDK's OAuth client provider interface, re-exported for embedders' own providers. */
export type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';

/**
 * The OAuth provider of server `name`: the embedder's own, else agentloop's stored one; none for a
 * stdio server or one whose configured headers already carry an `Authorization`. `secret` is told
 * every token the stored provider reads or gets.
 */
export function authProviderFor(
  name: string,
  config: McpServerConfig,
  options: McpAuthOptions,
  store: () => McpAuthStore,
  secret?: (value: string) => void,
): OAuthClientProvider | undefined {
  if (!isHttpServer(config)) return undefined;
  const own = options.providers?.[name];
  if (own) return own;
  if (Object.keys(config.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) return undefined;
  return new StoredOAuthProvider({
    server: name,
    url: config.url,
    store: store(),
    config: config.oauth,
    signIn: options.signIn,
    secret,
  });
}

/** The store `options` select (their `dir`, else the default `auth/` folder). */
export function authStoreOf(options: McpAuthOptions): McpAuthStore {
  return new McpAuthStore(options.dir ?? defaultAuthDir());
}
