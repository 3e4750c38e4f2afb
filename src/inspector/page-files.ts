// The HTTP side of the inspector: the page's static files.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasToken } from './access-token.js';
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

/**
 * The page may load only its own scripts and styles and connect only to its own server, and no page
 * may frame it (a framed inspector could be clicked through: clickjacking of Approve).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'";
/** For answers that are not the page's files (errors): nothing to load, nothing to frame. */
const ERROR_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers of every answer: never cached, never sniffed, never framed (`X-Frame-Options` for
 * browsers that ignore `frame-ancestors`), and the page's URL (with its token) never sent as a referrer.
 */
const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** The page's static files, served without the token: the package's public code, no session data. */
const ASSET_TYPES = new Set(['.js', '.css', '.map', '.svg', '.png']);

/**
 * A request handler serving the files under `publicDir` (an absolute path) to this machine only
 * (`GET` and `HEAD`; `/` is `index.html`; nothing outside `publicDir`; never cached). The page
 * itself (`/`, any `.html`) needs `?token=<token>`; its scripts, styles and source maps do not.
 */
export function pageFiles(
  publicDir: string,
  host: string,
  token: string,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const answer = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) =>
    res
      .writeHead(status, {
        ...BASE_HEADERS,
        'content-type': 'text/plain; charset=utf-8',
        'content-security-policy': ERROR_CONTENT_SECURITY_POLICY,
        ...headers,
      })
      .end(text);
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!isLocalHost(req.headers.host, host)) return void answer(res, 403, 'forbidden host');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return void answer(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
    }
    let urlPath: string;
    try {
      urlPath = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      // A malformed escape (`/%E0%A4%A`) must not become an unhandled rejection.
      return void answer(res, 400, 'bad request');
    }
    const file = path.resolve(publicDir, `.${urlPath === '/' ? '/index.html' : urlPath}`);
    if (!file.startsWith(publicDir + path.sep)) return void answer(res, 404, 'not found');
    if (!ASSET_TYPES.has(path.extname(file)) && !hasToken(req.url, token)) {
      return void answer(
        res,
        401,
        'this page needs its token: open the address agentloop printed (http://127.0.0.1:<port>/?token=...)',
      );
    }
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      const isPage = urlPath === '/' || urlPath === '/index.html';
      return void answer(res, 404, isPage ? 'inspector page not built: run `npm run build`' : 'not found');
    }
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      'content-security-policy': CONTENT_SECURITY_POLICY,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  // An unexpected throw answers 500: a rejected promise here would end the agent's process.
  return (req, res) =>
    serve(req, res).catch(() => {
      try {
        if (res.headersSent) res.destroy();
        else answer(res, 500, 'internal error');
      } catch {
        res.destroy();
      }
    });
}
