import { execFile } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { withLock } from './folder-lock.js';

/** The repository root. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** `dist/cli/main.js`, the CLI as users run it. */
export const cliPath = path.join(repoRoot, 'dist', 'cli', 'main.js');

/**
 * Builds `dist/` (`tsc -p tsconfig.build.json`), one build at a time across vitest workers (a lock
 * folder), so tests run the code as users do: `node dist/...`. A build is skipped when the last one
 * (this function's, or the CLI file's time for one made outside) is newer than every file under `src/`
 * and the tsconfigs (several test files need dist; one build serves them all).
 */
export async function buildDist(): Promise<void> {
  const lock = path.join(repoRoot, 'dist.build-lock');
  await withLock(lock, async () => {
    const stamp = path.join(repoRoot, 'dist', '.build-started');
    // A build made outside the tests (`npm run build`, as .ci/run does first) counts too: rebuilding
    // it here would rewrite dist/ while other test files' child processes import from it.
    const cliBuilt = (await stat(cliPath).catch(() => undefined))?.mtimeMs ?? 0;
    const built = Math.max(Number(await readFile(stamp, 'utf8').catch(() => '0')), cliBuilt);
    if (built > (await newestSource()) && (await stat(cliPath).catch(() => undefined))) return;
    const startedBuild = Date.now();
    await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: repoRoot }).catch(
      (error: { stdout?: string }) => {
        // tsc still emits on type errors elsewhere in the tree; the tests below show whether ours work.
        console.warn(`tsc reported errors:\n${error.stdout ?? error}`);
      },
    );
    await stat(cliPath);
    await writeFile(stamp, String(startedBuild));
  });
}

/** The latest modification time of the sources a build reads. */
async function newestSource(): Promise<number> {
  const times = await Promise.all(
    ['tsconfig.json', 'tsconfig.build.json'].map((f) => stat(path.join(repoRoot, f)).then((s) => s.mtimeMs)),
  );
  const walk = async (dir: string): Promise<void> => {
    // A folder's time changes when a file in it is added, removed or renamed.
    times.push((await stat(dir)).mtimeMs);
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else times.push((await stat(full)).mtimeMs);
    }
  };
  await walk(path.join(repoRoot, 'src'));
  return Math.max(...times);
}
