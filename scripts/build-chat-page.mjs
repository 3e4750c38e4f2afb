// Bundles the chat page's script (chat-page/src/main.ts, with @ag-ui/client and AgentloopHttpAgent
// inside) into chat-page/public/js/chat.js with esbuild: `npm run build` runs it, and the tests that
// open the page run it first (test/support/chat-page.ts), so a fresh clone needs no build before
// `npm test`. The file is written under a temporary name and renamed, so two test files building at
// once never serve a half-written script.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'chat-page', 'public', 'js');

const result = await build({
  entryPoints: [path.join(root, 'chat-page', 'src', 'main.ts')],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  write: false,
  logLevel: 'warning',
});
await mkdir(outDir, { recursive: true });
const out = path.join(outDir, 'chat.js');
const temp = `${out}.${process.pid}.tmp`;
await writeFile(temp, result.outputFiles[0].contents);
await rename(temp, out);
