import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Cross-origin access: off unless origins are listed. A listed origin (or `*`) gets the CORS headers
 * for the run and event endpoints; any other origin gets none, so browsers refuse the response.
 * Returns true when the request was a preflight and has been answered.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, origins: readonly string[]): boolean {
  const origin = req.headers.origin;
  const allowed = origin !== undefined && (origins.includes('*') || origins.includes(origin));
  if (allowed) {
    res.setHeader('access-control-allow-origin', origins.includes('*') ? '*' : origin);
    res.setHeader('vary', 'Origin');
    res.setHeader('access-control-expose-headers', 'content-type');
  }
  if (req.method !== 'OPTIONS') return false;
  if (allowed) {
    res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'content-type, authorization, accept, last-event-id');
    res.setHeader('access-control-max-age', '600');
  }
  res.writeHead(allowed ? 204 : 403);
  res.end();
  return true;
}
