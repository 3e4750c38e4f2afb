import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fdatasync as fdatasyncCallback,
  fsync as fsyncCallback,
  open as openCallback,
  openSync,
  write as writeCallback,
} from 'node:fs';
import { link, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const noop = () => {};
const writeFd = promisify(writeCallback);
/** `fsync` of a file descriptor. */
export const fsyncFd = promisify(fsyncCallback);
/** `fdatasync` of a file descriptor. */
export const fdatasyncFd = promisify(fdatasyncCallback);
const openCallbackFd = promisify(openCallback);
/** Opens a file descriptor (mode 0o666 before the umask, as `fs.open`). */
export const openFd = (file: string, flags: number): Promise<number> => openCallbackFd(file, flags, 0o666);

/** Writes all of `data` at the descriptor's position (one `write` unless the kernel takes less). */
export function writeAll(fd: number, data: string): Promise<void> {
  return writeAllAt(fd, Buffer.from(data), null);
}

/**
 * Writes all of `data` at `position` in the file (a positional write: the descriptor's offset is not
 * used), or with `null` at the descriptor's position.
 */
export async function writeAllAt(fd: number, data: Uint8Array, position: number | null): Promise<void> {
  for (let offset = 0; offset < data.length; ) {
    const at = position === null ? null : position + offset;
    offset += (await writeFd(fd, data, offset, data.length - offset, at)).bytesWritten;
  }
}

/**
 * The open flag that makes each write durable before it returns (`O_SYNC`: as `fsync` after it), or 0
 * where the platform has none (then callers flush with `sync()`). One trip through libuv's thread pool
 * instead of two: on a busy machine each trip costs a thread wake-up, more than the syscall itself.
 */
export const SYNC_WRITES: number = constants.O_SYNC ?? 0;
/** As {@link SYNC_WRITES}, with `fdatasync`'s guarantee (`O_DSYNC`): the data and what reading it needs. */
export const DSYNC_WRITES: number = constants.O_DSYNC ?? 0;

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
  const sync = fsync ? SYNC_WRITES : 0;
  let fd: number | undefined;
  try {
    fd = await openFd(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | sync);
    await writeAll(fd, data);
    if (fsync && sync === 0) await fsyncFd(fd);
    const written = fd;
    fd = undefined;
    closeSync(written); // in place: nothing to wait for once the data is flushed
    return temp;
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
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

/**
 * Makes a rename or a new file in `dir` durable. Some platforms cannot open folders; they skip it.
 * Opening and closing the folder are done in place (microseconds, nothing to wait for on disk); only
 * the flush goes through the thread pool.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    await fsyncFd(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EACCES') throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
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
