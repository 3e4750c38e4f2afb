// Who may talk to the inspector: requests from this machine, and WebSockets opened by its own page.

/**
 * Whether a request's `Host` header names this machine (`127.0.0.1`, `localhost`, `[::1]`) or the
 * host the server listens on. Anything else (a DNS-rebinding page) is refused.
 */
export function isLocalHost(hostHeader: string | undefined, host: string): boolean {
  if (!hostHeader) return false;
  const name = hostHeader.replace(/:\d+$/, '');
  return name === '127.0.0.1' || name === 'localhost' || name === '[::1]' || name === host;
}

/** Whether a WebSocket's `Origin` is the page's own: the same host and port as the request's `Host`. */
export function isSameOrigin(origin: string, hostHeader: string | undefined): boolean {
  try {
    return new URL(origin).host === hostHeader;
  } catch {
    return false;
  }
}
