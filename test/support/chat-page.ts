// The chat page's bundle for tests that open it: built here (scripts/build-chat-page.mjs), so `npm
// test` works in a fresh clone where `npm run build` has not run.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './build-dist.js';

/** Bundles chat-page/src into chat-page/public/js/chat.js (written atomically; concurrent builds are safe). */
export async function buildChatPage(): Promise<void> {
  await promisify(execFile)(process.execPath, [path.join(repoRoot, 'scripts', 'build-chat-page.mjs')], {
    cwd: repoRoot,
  });
}
