/** A server the test started; `stop` closes it and its connections. */
export interface RemoteServer {
  url: string;
  stop(): Promise<void>;
}
/** An SSE-only MCP server (the older HTTP+SSE transport) with `echo` and `whoami`; its URL is the stream's. */
export function startSseServer(): Promise<RemoteServer>;
/** What the test controls and sees of the OAuth server. */
export interface OAuthControl {
  accessTokenSeconds: number;
  authorizations: number;
  refreshes: number;
  registrations: number;
  issued: string[];
  lastResource?: string;
  revokeRefreshTokens(): void;
  expireAccessTokens(): void;
}
/** An OAuth-protected Streamable HTTP MCP server at `url` (`/mcp`), its authorization server at `origin`. */
export function startOAuthServer(options?: {
  sse?: boolean;
}): Promise<RemoteServer & { origin: string; control: OAuthControl }>;
