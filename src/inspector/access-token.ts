// The inspector's token: a random secret per server, carried as `?token=` by the page's URL and by
// its WebSocket. A request that names this machine is not enough: any local process, and any page
// that can get a request to 127.0.0.1, could otherwise drive approvals.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new token: 32 random bytes, base64url (43 characters, safe in a URL as is). */
export function newAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a request's URL (`/ws?token=...`) carries `token`. Compared in constant time. */
export function hasToken(requestUrl: string | undefined, token: string): boolean {
  let given: string | null;
  try {
    given = new URL(requestUrl ?? '/', 'http://x').searchParams.get('token');
  } catch {
    return false;
  }
  if (given === null) return false;
  // Digests have the same length whatever was sent, so the comparison leaks nothing of the token.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}
