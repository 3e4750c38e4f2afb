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
  /** A sign-in that `signIn` started has finished: the server runs and offers `tools` tools. */
  signedIn?: (server: string, tools: number) => void;
  /**
   * Your own OAuth client providers, by server name (agentloop's is not used for those): each an
   * `OAuthClientProvider` of `@modelcontextprotocol/sdk/client/auth.js` (typed `object` here so that
   * agentloop's declarations do not need the optional MCP SDK; check yours with `satisfies`).
   */
  providers?: Record<string, object>;
}
