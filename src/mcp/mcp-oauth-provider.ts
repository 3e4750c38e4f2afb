import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpAuthOptions } from './mcp-auth.js';
import { defaultAuthDir, McpAuthStore } from './mcp-auth-store.js';
import { isHttpServer, type McpOAuthConfig, type McpServerConfig } from './mcp-config.js';
import { LoopbackRedirect } from './mcp-oauth-redirect.js';
import { assertSecureAuthUrl, checkDiscovery } from './mcp-oauth-urls.js';
import { McpSignInRequired } from './mcp-sign-in-required.js';

/** Thrown inside the SDK's flow when only a refresh was wanted (it stops before a new sign-in). */
class RefreshOnly extends Error {}

/** Refreshed this long before the access token expires. */
const REFRESH_MARGIN_MS = 60_000;

/** What the stored provider needs beside the store. */
export interface StoredOAuthOptions {
  /** The server's name (in messages) and URL (the store's key). */
  server: string;
  url: string;
  store: McpAuthStore;
  config?: McpOAuthConfig | undefined;
  /** Sends the user to the authorization URL; without it, a sign-in throws {@link McpSignInRequired}. */
  signIn?: ((server: string, url: URL) => void) | undefined;
  /** Told every token as it is read or obtained (the agent's redactor learns them). */
  secret?: ((value: string) => void) | undefined;
}

/**
 * agentloop's OAuth client provider for one remote server, for the MCP SDK's client auth (which does
 * discovery, dynamic registration, PKCE, `resource` and refresh): tokens, registration and discovery
 * kept in a {@link McpAuthStore}; the browser sent back to a {@link LoopbackRedirect} with a `state`
 * of 32 random bytes; without `signIn`, a sign-in is refused with {@link McpSignInRequired}.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  readonly #o: StoredOAuthOptions;
  #redirect: LoopbackRedirect | undefined;
  #opening: Promise<LoopbackRedirect> | undefined;
  #verifier = '';
  /** The `state` of the sign-in whose link was given, while it waits for the browser. */
  #shown: string | undefined;
  #refreshOnly = false;
  /** What discovery found in this process (never read from the auth folder: it may sit in a project). */
  #discovery: OAuthDiscoveryState | undefined;
  /** Every token seen, to take out of text that leaves this folder. */
  readonly #known = new Set<string>();

  constructor(options: StoredOAuthOptions) {
    this.#o = options;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#o.config?.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.#redirect?.url ?? 'http://127.0.0.1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.#o.config?.clientSecret;
    return {
      client_name: 'agentloop',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: secret ? 'client_secret_basic' : 'none',
      ...(this.#o.config?.scope ? { scope: this.#o.config.scope } : {}),
    };
  }

  /** Whether tokens are stored for the server. */
  async signedIn(): Promise<boolean> {
    return (await this.#o.store.read(this.#o.url))?.tokens !== undefined;
  }

  /**
   * The `state` of a new sign-in. While one whose link was given waits for the browser, calls that
   * meet a 401 meanwhile (several tools at once) join it: same state, same verifier, no second link.
   */
  async state(): Promise<string> {
    if (this.#refreshOnly) throw new RefreshOnly();
    if (this.#shown !== undefined) return this.#shown;
    const redirect = await this.#listen();
    const state = randomBytes(32).toString('base64url');
    redirect.expect(state);
    return state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { config } = this.#o;
    if (config?.clientId) {
      return {
        client_id: config.clientId,
        ...(config.clientSecret ? { client_secret: config.clientSecret } : {}),
      };
    }
    const record = await this.#o.store.read(this.#o.url);
    if (record?.client) return record.client as OAuthClientInformationMixed;
    // No registration yet: one is made next, for a sign-in nobody can do here (or listening first,
    // so that the redirect URI registered has the port the browser comes back to).
    if (this.#refreshOnly) throw new RefreshOnly();
    await this.#listen();
    return undefined;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    await this.#o.store.update(this.#o.url, (r) => ({ ...r, client: { ...client } }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const tokens = (await this.#o.store.read(this.#o.url))?.tokens;
    if (!tokens) return undefined;
    this.#learn(tokens.access_token, tokens.refresh_token);
    const { expires_at: _kept, ...sent } = tokens;
    return sent as unknown as OAuthTokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.#learn(tokens.access_token, tokens.refresh_token);
    const expiresAt =
      typeof tokens.expires_in === 'number' ? Date.now() + tokens.expires_in * 1000 : undefined;
    await this.#o.store.update(this.#o.url, (r) => ({
      ...r,
      tokens: {
        // A refresh that sends no new refresh token keeps the old one (RFC 6749 section 6).
        ...(r.tokens?.refresh_token ? { refresh_token: r.tokens.refresh_token } : {}),
        ...tokens,
        ...(expiresAt ? { expires_at: expiresAt } : {}),
      },
    }));
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const { signIn, server } = this.#o;
    if (!signIn || this.#refreshOnly) throw new McpSignInRequired(server);
    assertSecureAuthUrl(server, 'the authorization endpoint', authorizationUrl);
    if (this.#shown !== undefined) return; // joined the sign-in whose link was given
    await this.#listen();
    this.#shown = authorizationUrl.searchParams.get('state') ?? '';
    signIn(server, authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    if (this.#shown === undefined) this.#verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error('no sign-in was started');
    return this.#verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.#verifier = '';
      return;
    }
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
    await this.#o.store.update(this.#o.url, (r) => {
      const { url } = r;
      if (scope === 'all') return { url };
      const { [scope === 'client' ? 'client' : scope]: _dropped, ...rest } = r;
      return { ...rest, url };
    });
  }

  /**
   * Checks what discovery found (https endpoints, the issuer: {@link checkDiscovery}) before the SDK
   * registers, sends the user to sign in or asks for tokens, and keeps it for this process only: the
   * auth folder can sit in a project a repository brings, so endpoints read back from it could be
   * anyone's. Each process discovers from the server's own metadata once (docs/security.md).
   */
  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    checkDiscovery(this.#o.server, state);
    this.#discovery = { ...state };
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return this.#discovery;
  }

  /** The authorization code of the sign-in under way (after {@link redirectToAuthorization}). */
  pendingCode(): Promise<string> | undefined {
    return this.#redirect?.code;
  }

  /** Stops listening for the browser (the sign-in finished or was given up). */
  endSignIn(reason?: string): void {
    this.#shown = undefined;
    this.#redirect?.close(reason);
    this.#redirect = undefined;
    this.#opening = undefined;
  }

  /**
   * Whether the stored access token expires within a minute and can be refreshed; then `refresh`
   * (the SDK's `auth`) is called with new sign-ins refused, so a failed refresh leaves it to the next
   * request's 401.
   */
  async refreshIfExpiring(refresh: () => Promise<unknown>): Promise<void> {
    const tokens = (await this.#o.store.read(this.#o.url))?.tokens;
    if (!tokens?.refresh_token || !tokens.expires_at || tokens.expires_at - Date.now() > REFRESH_MARGIN_MS)
      return;
    this.#refreshOnly = true;
    try {
      await refresh();
    } catch {
      // Refused or failed: the request's 401 leads to the SDK's refresh, then a sign-in.
    } finally {
      this.#refreshOnly = false;
    }
  }

  /** `text` with every token this provider has seen replaced. */
  scrub(text: string): string {
    let out = text;
    for (const token of this.#known) out = out.split(token).join('[REDACTED]');
    return out;
  }

  async #listen(): Promise<LoopbackRedirect> {
    if (!this.#o.signIn) throw new McpSignInRequired(this.#o.server);
    this.#opening ??= LoopbackRedirect.open().then(
      (redirect) => (this.#redirect = redirect),
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  #learn(...tokens: (string | undefined)[]): void {
    for (const token of tokens) {
      if (!token || this.#known.has(token)) continue;
      this.#known.add(token);
      this.#o.secret?.(token);
    }
  }
}

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
  const own = options.providers?.[name] as OAuthClientProvider | undefined;
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
