import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';

// Where a remote MCP server's sign-in may send its secrets (the authorization code, the PKCE
// verifier, the client secret, the tokens): https only, or http to this machine (a local test or
// development server). Every authorization-server URL is checked, the ones a server's resource
// metadata names included, and a refusal names the URL.

/** Whether `host` (a URL's hostname) is this machine: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name)
  );
}

/** Whether `url` may carry sign-in secrets: https, or http to a loopback host. */
export function isSecureAuthUrl(url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return false;
  }
  if (parsed.protocol === 'https:') return true;
  return parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname);
}

/** The error for an authorization URL that is not https (nor loopback), naming the server and the URL. */
export function insecureAuthUrlError(server: string, what: string, url: string | URL): Error {
  return new Error(
    `MCP server "${server}": refusing to sign in through ${what} ${String(url)}: authorization servers ` +
      'must use https (http only to this machine), or the code, the PKCE verifier and the tokens travel in cleartext',
  );
}

/** Throws {@link insecureAuthUrlError} when `url` is given and not https (nor loopback). */
export function assertSecureAuthUrl(server: string, what: string, url: unknown): void {
  if (url === undefined || url === null) return;
  if (typeof url !== 'string' && !(url instanceof URL)) throw insecureAuthUrlError(server, what, String(url));
  if (!isSecureAuthUrl(url)) throw insecureAuthUrlError(server, what, url);
}

/**
 * Checks what discovery found before the sign-in uses it: the authorization server, the servers the
 * resource metadata names, and the metadata's authorization, token and registration endpoints are
 * https (or loopback); the metadata's `issuer` is the authorization server it was fetched for
 * (RFC 8414 section 3.3; a trailing slash aside).
 */
export function checkDiscovery(server: string, state: OAuthDiscoveryState): void {
  assertSecureAuthUrl(server, 'the authorization server', state.authorizationServerUrl);
  for (const named of state.resourceMetadata?.authorization_servers ?? [])
    assertSecureAuthUrl(server, 'the authorization server its resource metadata names,', named);
  const metadata = state.authorizationServerMetadata;
  if (!metadata) return;
  assertSecureAuthUrl(server, 'the authorization endpoint', metadata.authorization_endpoint);
  assertSecureAuthUrl(server, 'the token endpoint', metadata.token_endpoint);
  assertSecureAuthUrl(server, 'the registration endpoint', metadata.registration_endpoint);
  const trimmed = (url: string) => url.replace(/\/+$/, '');
  if (metadata.issuer && trimmed(metadata.issuer) !== trimmed(String(state.authorizationServerUrl)))
    throw new Error(
      `MCP server "${server}": the authorization server ${state.authorizationServerUrl} sent metadata ` +
        `for another issuer (${metadata.issuer}); refusing to sign in through it`,
    );
}

/** A `fetch` for a server's transport and sign-in that refuses, naming it, any non-https URL off this machine. */
export function authCheckedFetch(server: string, serverUrl: string): typeof fetch {
  const own = new URL(serverUrl).origin;
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    // The server's own URLs are the configuration's choice; anything else is an authorization server.
    if (new URL(url).origin !== own && !isSecureAuthUrl(url))
      return Promise.reject(insecureAuthUrlError(server, 'the authorization server at', url));
    return fetch(input, init);
  };
}
