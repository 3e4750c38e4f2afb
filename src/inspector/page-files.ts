// The HTTP side of the inspector: the page's static files.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isLocalHost } from './local-origin.js';

/** The page's files: `inspector/public` at the package root (two levels above src/inspector and dist/inspector). */
export const INSPECTOR_PUBLIC_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'inspector',
  'public',
);

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
  '.json': 'application/json',
  '.png': 'image/png',
};

/** The page may load only its own scripts and styles and connect only to its own server. */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'";

/**
 * A request handler serving the files under `publicDir` (an absolute path) to this machine only
 * (`GET` and `HEAD`; `/` is `index.html`; nothing outside `publicDir`; never cached).
 */
export function pageFiles(
  publicDir: string,
  host: string,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (!isLocalHost(req.headers.host, host)) {
      res.writeHead(403).end('forbidden host');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    let urlPath: string;
    try {
      urlPath = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      // A malformed escape (`/%E0%A4%A`) must not become an unhandled rejection.
      res.writeHead(400).end('bad request');
      return;
    }
    const file = path.resolve(publicDir, `.${urlPath === '/' ? '/index.html' : urlPath}`);
    if (!file.startsWith(publicDir + path.sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-security-policy': CONTENT_SECURITY_POLICY,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end(
          urlPath === '/' || urlPath === '/index.html'
            ? 'inspector page not built: run `npm run build`'
            : 'not found',
        );
    }
  };
}
