import { mkdir, rmdir, stat } from 'node:fs/promises';

/** One caller at a time across vitest workers: a lock folder, taken over when older than 2 minutes. */
export async function withLock<T>(lock: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
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
    return await run();
  } finally {
    await rmdir(lock).catch(() => {});
  }
}
