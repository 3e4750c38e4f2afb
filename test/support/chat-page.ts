// The chat page's bundle for tests that open it: built here (scripts/build-chat-page.mjs), so `npm
// test` works in a fresh clone where `npm run build` has not run. A Chromium for them.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { repoRoot } from './build-dist.js';

/** Bundles chat-page/src into chat-page/public/js/chat.js (written atomically; concurrent builds are safe). */
export async function buildChatPage(): Promise<void> {
  await promisify(execFile)(process.execPath, [path.join(repoRoot, 'scripts', 'build-chat-page.mjs')], {
    cwd: repoRoot,
  });
}

/** Debian's Chromium, headless, as the page tests run it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
