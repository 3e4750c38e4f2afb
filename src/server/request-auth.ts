import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/**
 * Who may call the server. A bearer token (every caller holding it is one principal, `token`), or a
 * function of the request returning the caller's principal (a user id, a tenant) or undefined to
 * refuse it. A session belongs to the principal that created it.
 */
export type AuthOption =
  | { token: string }
  | ((req: IncomingMessage) => string | undefined | Promise<string | undefined>);

/** The principal of callers on a loopback server without `auth`. */
export const LOCAL_PRINCIPAL = 'local';

/** Hosts that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Refuses a configuration that would serve agents beyond this machine to anyone: a host other than
 * loopback needs `auth`. Throws naming the option.
 */
export function checkExposure(host: string, auth: AuthOption | undefined): void {
  if (auth === undefined && !isLoopbackHost(host)) {
    throw new Error(
      `refusing to listen on ${host} without auth: a host other than loopback needs \`auth\` (a bearer token or a function of the request)`,
    );
  }
  if (
    auth !== undefined &&
    typeof auth !== 'function' &&
    (typeof auth.token !== 'string' || auth.token === '')
  ) {
    throw new Error('auth.token must be a non-empty string');
  }
}

/**
 * The caller's principal, or a 401. Without `auth` (loopback only) a request whose `Host` header
 * does not name this machine is refused (a DNS-rebinding page), and every caller is `local`.
 */
export async function principalOf(req: IncomingMessage, auth: AuthOption | undefined): Promise<string> {
  if (auth === undefined) {
    const name = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    if (!isLoopbackHost(name))
      throw new HttpError(
        403,
        'forbidden_host',
        'this server only answers requests addressed to this machine',
      );
    return LOCAL_PRINCIPAL;
  }
  if (typeof auth === 'function') {
    let principal: string | undefined;
    try {
      principal = await auth(req);
    } catch {
      principal = undefined;
    }
    if (typeof principal !== 'string' || principal === '') throw unauthorized();
    return principal;
  }
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  const a = Buffer.from(given);
  const b = Buffer.from(auth.token);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw unauthorized();
  return 'token';
}

function unauthorized(): HttpError {
  return new HttpError(401, 'unauthorized', 'missing or wrong credentials');
}
