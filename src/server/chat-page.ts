// The chat page an agent server can serve at `/` (`page: true`; `agentloop serve` does): static
// files from `chat-page/public` in the package, built by `npm run build` (scripts/build-chat-page.mjs).
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page's files: `chat-page/public` at the package root (two levels above src/server and dist/server). */
export const CHAT_PAGE_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'chat-page',
  'public',
);

/** The page's addresses and the files they answer with. */
const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/chat.js': { file: path.join('js', 'chat.js'), type: 'text/javascript; charset=utf-8' },
  '/chat.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

/**
 * The page runs only its own script and style and talks only to its own server; no page may frame it
 * (a framed chat could be clicked through: clickjacking of Approve).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS = {
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // The page's URL may carry the token in its fragment; never send the URL on.
  'referrer-policy': 'no-referrer',
  'content-security-policy': CONTENT_SECURITY_POLICY,
};

/** Whether `pathname` is one of the page's files. */
export function isChatPagePath(pathname: string): boolean {
  return Object.hasOwn(FILES, pathname);
}

/**
 * Answers a `GET` or `HEAD` of one of the page's files. They hold no session data (the script asks
 * the run endpoints, which check the caller), so they are served without auth.
 */
export async function serveChatPage(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  dir = CHAT_PAGE_DIR,
): Promise<void> {
  const entry = FILES[pathname]!;
  let body: Buffer;
  try {
    body = await readFile(path.join(dir, entry.file));
  } catch {
    res.writeHead(404, { ...HEADERS, 'content-type': 'text/plain; charset=utf-8' });
    res.end('chat page not built: run `npm run build`');
    return;
  }
  res.writeHead(200, { ...HEADERS, 'content-type': entry.type, 'content-length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}
