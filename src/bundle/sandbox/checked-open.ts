import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink } from 'node:fs/promises';
import path from 'node:path';
import { BundleError } from '../bundle-error.js';
import { realPathOf } from './sandbox-paths.js';

// The descriptor half of the sandbox (docs/sandbox.md, "Checking the file actually opened"): open
// first, then learn where the opened file really lies, so that a folder swapped for a symlink between
// the path check and the open cannot lead a read or a write outside the roots.

/** The open flags of each kind of open the sandbox makes. */
export interface OpenFlags {
  /** A read: never follow a final symlink; never block opening a FIFO (the read refuses it after fstat). */
  read: number;
  /** A write: created if missing, as for a read otherwise; no O_TRUNC, so nothing changes before the
   * opened file has been checked (hard links, location). */
  write: number;
  /** A folder on a write's way: only a folder, never through a symlink. */
  folder: number;
}

/** The flags {@link openFlags} builds on; those a platform lacks (Windows has no O_NOFOLLOW) are undefined. */
export type OpenConstants = Pick<typeof constants, 'O_RDONLY' | 'O_WRONLY' | 'O_CREAT'> &
  Partial<Pick<typeof constants, 'O_NOFOLLOW' | 'O_NONBLOCK' | 'O_DIRECTORY'>>;

/**
 * The open flags from the flags a platform has (`fs.constants`). A flag it lacks is left out, and then
 * only the check after the open ({@link openedPath}) stands: without O_NOFOLLOW an open follows a
 * symlink put in the file's place, and the opened path says where it really led.
 */
export function openFlags(available: OpenConstants = constants): OpenFlags {
  const noFollow = available.O_NOFOLLOW ?? 0;
  const noBlock = available.O_NONBLOCK ?? 0;
  return {
    read: available.O_RDONLY | noFollow | noBlock,
    write: available.O_WRONLY | available.O_CREAT | noFollow | noBlock,
    folder: available.O_RDONLY | (available.O_DIRECTORY ?? 0) | noFollow,
  };
}

/** This platform's open flags. */
const FLAGS = openFlags();

/** The magic link naming an open descriptor's file; a path below it resolves from that folder. */
const fdPath = (handle: FileHandle): string => `/proc/self/fd/${handle.fd}`;

/**
 * Whether `/proc/self/fd/N` tells where descriptor N lies: only on Linux, with /proc mounted. The
 * folder `probe` (by default `/`, which every process may open) is opened, and its magic link must
 * read its path back; any failure on the way means no.
 */
export async function probeProcFd(
  platform: NodeJS.Platform = process.platform,
  probe = '/',
): Promise<boolean> {
  if (platform !== 'linux') return false;
  try {
    const handle = await open(probe, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
    try {
      return (await readlink(fdPath(handle))) === probe;
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

let procProbe: Promise<boolean> | undefined;

/** {@link probeProcFd} for this process: probed once, the same answer after. */
export function procFdWorks(): Promise<boolean> {
  procProbe ??= probeProcFd();
  return procProbe;
}

/** What a non-regular file is, for error messages. */
export function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSymbolicLink()) return 'a symlink';
  return 'not a regular file';
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

type Verb = 'Access denied' | 'Write refused';

/** What a refusal says happened: nothing moved. */
const nothingDone = (verb: Verb): string => `nothing was ${verb === 'Access denied' ? 'read' : 'written'}`;

/**
 * A symlink or a file took the place of `at`, or the place emptied, between the check and the open.
 * Names the file asked for, the path that changed and, when a system call said so, its error code.
 */
function changed(verb: Verb, input: string, at: string, error?: unknown): BundleError {
  const code = codeOf(error);
  return new BundleError(
    'sandbox',
    `${verb}: ${input}: ${at} changed while being opened${code ? ` (${code})` : ''}; ${nothingDone(verb)}`,
    { file: input, cause: error },
  );
}

/** A system call on `at` failed for a reason other than a swap: names the file, the path, the error code. */
function failed(verb: Verb, input: string, doing: string, at: string, error: unknown): BundleError {
  return new BundleError(
    'sandbox',
    `${verb}: ${input}: cannot ${doing} ${at} (${codeOf(error) ?? String(error)}); ${nothingDone(verb)}`,
    { file: input, cause: error },
  );
}

/** Opens the checked real path of a read: no final symlink followed, a FIFO opened without blocking. */
export async function openForRead(real: string, input: string): Promise<FileHandle> {
  try {
    return await open(real, FLAGS.read);
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new BundleError('not-found', `File not found: ${input}`, { file: input, cause: error });
    }
    if (code === 'ELOOP') throw changed('Access denied', input, real, error);
    throw failed('Access denied', input, 'open', real, error);
  }
}

export interface WriteTarget {
  /** The write root (real path). */
  root: string;
  /** The checked real path of the file, strictly inside `root`. */
  real: string;
  /** As the caller gave it, for messages. */
  input: string;
  /** Walk from the root through descriptors (`/proc/self/fd`); else the portable path-based open. */
  useProc: boolean;
  /** Throws unless a write to this real path is allowed (the portable path checks the parent again). */
  check: (real: string) => Promise<unknown>;
}

/**
 * Makes the folder `at` (`shown` in messages), with its missing parents when `parents`. Without
 * parents, whatever is already there is left to the open that follows, which refuses all but a folder;
 * with them, mkdir fails only when a file (or a dangling symlink) is in the place of one of the folders.
 */
async function makeFolder(at: string, shown: string, input: string, parents: boolean): Promise<void> {
  try {
    await mkdir(at, { recursive: parents });
  } catch (error) {
    const code = codeOf(error);
    if (code === 'EEXIST' && !parents) return;
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw new BundleError(
        'sandbox',
        `Write refused: ${input}: a file is in the place of ${shown} or one of its folders (${code}); nothing was written`,
        { file: input, cause: error },
      );
    }
    throw failed('Write refused', input, 'make the folder', shown, error);
  }
}

/** Opens the folder `at` (no symlink followed); `shown` is its path for messages. */
async function openFolderAt(at: string, shown: string, input: string): Promise<FileHandle> {
  try {
    return await open(at, FLAGS.folder);
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ENOTDIR' || code === 'ELOOP') {
      throw new BundleError(
        'sandbox',
        `Write refused: ${input}: ${shown} is not a folder (${code}: a file or a symlink is in its place); nothing was written`,
        { file: input, cause: error },
      );
    }
    throw changed('Write refused', input, shown, error);
  }
}

/**
 * Opens (creating it and its folders) the file to write, without truncating it. With /proc: from a
 * descriptor of the write root, each folder is made and opened relative to the folder before it
 * (`/proc/self/fd/N/name`, i.e. openat) with O_NOFOLLOW, so no symlink is followed on the way and
 * nothing is created outside. Without: `mkdir -p`, the parent checked again, then an O_NOFOLLOW open.
 */
export async function openForWrite(target: WriteTarget): Promise<FileHandle> {
  const { root, real, input } = target;
  if (!target.useProc) {
    await makeFolder(path.dirname(real), path.dirname(real), input, true);
    await target.check(path.join(await realPathOf(path.dirname(real)), path.basename(real)));
    return openWriteFile(real, input, real);
  }
  await makeFolder(root, root, input, true);
  let folder = await openFolderAt(root, root, input);
  try {
    if ((await readlink(fdPath(folder))) !== root) throw changed('Write refused', input, root);
    const segments = path.relative(root, real).split(path.sep);
    const name = segments.pop() as string;
    let shown = root;
    for (const segment of segments) {
      const at = `${fdPath(folder)}/${segment}`;
      shown = path.join(shown, segment);
      await makeFolder(at, shown, input, false);
      const next = await openFolderAt(at, shown, input);
      await folder.close();
      folder = next;
    }
    return await openWriteFile(`${fdPath(folder)}/${name}`, input, path.join(shown, name));
  } finally {
    await folder.close();
  }
}

/** Opens the file at `at` to write, without truncating; `shown` is its path for messages. */
async function openWriteFile(at: string, input: string, shown: string): Promise<FileHandle> {
  try {
    return await open(at, FLAGS.write, 0o666);
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ELOOP') {
      throw new BundleError(
        'sandbox',
        `Write refused: ${input}: ${shown} is a symlink; nothing was written`,
        {
          file: input,
          cause: error,
        },
      );
    }
    if (code === 'EISDIR' || code === 'ENXIO') {
      const what = code === 'EISDIR' ? 'a folder' : 'a named pipe (FIFO) or a socket';
      throw new BundleError('invalid-input', `Not a regular file: ${input} is ${what}`, {
        file: input,
        cause: error,
      });
    }
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw changed('Write refused', input, path.dirname(shown), error);
    }
    throw failed('Write refused', input, 'open', shown, error);
  }
}

/**
 * Where the file `handle` has open really lies. With /proc: the descriptor's magic link. Without:
 * `expected` (the checked real path) resolved again after the open, accepted only if it names the very
 * file the descriptor holds (same device and inode); otherwise the path changed under us.
 */
export async function openedPath(
  handle: FileHandle,
  expected: string,
  input: string,
  useProc: boolean,
  verb: Verb,
): Promise<string> {
  if (useProc) {
    try {
      return await readlink(fdPath(handle));
    } catch (error) {
      throw changed(verb, input, fdPath(handle), error);
    }
  }
  const opened = await handle.stat({ bigint: true });
  const again = await realPathOf(expected);
  const now = await lstat(again, { bigint: true }).catch(() => undefined);
  if (!now || now.dev !== opened.dev || now.ino !== opened.ino) throw changed(verb, input, expected);
  // lstat follows symlinks in the folders on the way: a swap between realpath and lstat is caught
  // (most of the time; this check is not atomic) by resolving once more.
  if ((await realPathOf(expected)) !== again) throw changed(verb, input, expected);
  return again;
}
