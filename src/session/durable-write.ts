import { randomBytes } from 'node:crypto';
import { type FileHandle, link, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

const noop = () => {};

/**
 * Writes `data` to a temp file beside `file` (`<file>.<pid>-<random>.tmp`), flushes it, then renames
 * it over `file`, so that readers see the old contents or the new, never a mix. With `fsync` the folder
 * is flushed too, so that the rename survives a power loss.
 */
export async function writeFileAtomic(file: string, data: string, fsync: boolean): Promise<void> {
  const temp = await writeTemp(file, data, fsync);
  try {
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(noop);
    throw error;
  }
  if (fsync) await fsyncDir(path.dirname(file));
}

/** `data` in a new temp file beside `file` (`<file>.<pid>-<random>.tmp`), flushed with `fsync`; its path. Removed on failure. */
async function writeTemp(file: string, data: string, fsync: boolean): Promise<string> {
  const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx');
    await handle.writeFile(data);
    if (fsync) await handle.sync();
    await handle.close();
    return temp;
  } catch (error) {
    await handle?.close().catch(noop);
    await rm(temp, { force: true }).catch(noop);
    throw error;
  }
}

/** Removes the temp files that {@link writeFileAtomic} calls for `file` left when they crashed before their rename. */
export async function removeAtomicWriteLeftovers(file: string): Promise<void> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((name) => name.startsWith(prefix) && name.endsWith('.tmp'))
      .map((name) => rm(path.join(dir, name), { force: true })),
  );
}

/**
 * Creates `dir` and any missing folders above it. With `fsync`, when something was created, flushes
 * the folder that got the first new entry and `dir`'s parent, so that the new folder survives a power loss.
 */
export async function mkdirDurable(dir: string, fsync: boolean): Promise<void> {
  const created = await mkdir(dir, { recursive: true });
  if (created !== undefined && fsync) {
    await fsyncDir(path.dirname(created));
    if (path.dirname(created) !== path.dirname(dir)) await fsyncDir(path.dirname(dir));
  }
}

/** Makes a rename or a new file in `dir` durable. Some platforms cannot open folders; they skip it. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EACCES') throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * Creates `file` with `data` unless it exists (then false): written to a temp file and flushed first,
 * then hard-linked to its name, so that of two processes creating one name at once exactly one
 * succeeds and no reader ever sees it half written. With `fsync` the folder is flushed too.
 */
export async function createFileExclusive(file: string, data: string, fsync: boolean): Promise<boolean> {
  const temp = await writeTemp(file, data, fsync);
  try {
    await link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(temp, { force: true }).catch(noop);
  }
  if (fsync) await fsyncDir(path.dirname(file));
  return true;
}
