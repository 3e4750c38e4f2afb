import { execFile } from 'node:child_process';
import { mkdir, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository root. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** `dist/cli/main.js`, the CLI as users run it. */
export const cliPath = path.join(repoRoot, 'dist', 'cli', 'main.js');

/**
 * Builds `dist/` once per test file (`npm run build`), one build at a time across vitest workers
 * (a lock folder), so tests run the code as users do: `node dist/...`.
 */
export async function buildDist(): Promise<void> {
  const lock = path.join(repoRoot, 'dist.build-lock');
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      // A lock older than two minutes belongs to a build that died.
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > 120_000) await rmdir(lock).catch(() => {});
      if (Date.now() - started > 180_000) throw new Error(`waited 3 minutes for ${lock}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: repoRoot }).catch(
      (error: { stdout?: string }) => {
        // tsc still emits on type errors elsewhere in the tree; the tests below show whether ours work.
        console.warn(`tsc reported errors:\n${error.stdout ?? error}`);
      },
    );
    await stat(cliPath);
  } finally {
    await rmdir(lock).catch(() => {});
  }
}
