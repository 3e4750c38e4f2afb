import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { resolveSessionsDir } from '../../sessions-dir.js';
import { BundleError } from '../bundle-error.js';
import { kindOf, openedPath, openForRead, openForWrite, procFdWorks } from './checked-open.js';
import { checkInput, isInside, realPathOf } from './sandbox-paths.js';

export { realPathOf } from './sandbox-paths.js';

/** Default largest file `readText` returns (1 MiB). */
export const DEFAULT_MAX_READ_BYTES = 1024 * 1024;

/** Why a file was read: the lazy-loading log says who asked for each file. */
export type FileLoadReason =
  | 'agent'
  | 'discovery'
  | 'critical-action'
  | 'read_file'
  | 'workflow'
  | 'config'
  | 'instructions'
  | 'template'
  | 'validate'
  | 'skill';

/** One file read through the sandbox. */
export interface FileLoadEvent {
  /** Real path of the file. */
  path: string;
  reason: FileLoadReason;
  bytes: number;
}

export type FileLoadListener = (event: FileLoadEvent) => void;

export interface SandboxOptions {
  /** Folders reads may reach (bundle, core, project). */
  readRoots: string[];
  /** The only folder writes may reach (the output folder); without it every write is refused. */
  writeRoot?: string;
  /**
   * Session store folders neither reads nor writes may reach, on top of the ones always refused:
   * `<root>/.agentloop/sessions` of every root and `$AGENTLOOP_HOME/sessions`. Give the store's `dir`
   * when it is configured elsewhere (`agentloop chat --sessions-dir`).
   */
  sessionsDirs?: string[];
  /** Where `AGENTLOOP_HOME` is read; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Learn where an opened file lies from `/proc/self/fd` (default: whenever that works, i.e. on Linux
   * with /proc mounted). `false` selects the portable check (docs/sandbox.md); tests use it to run
   * that path on Linux.
   */
  procFd?: boolean;
  maxReadBytes?: number;
  onFileLoad?: FileLoadListener;
}

/** Where a path stands relative to the read roots. */
export type PathStatus = 'exists' | 'missing' | 'outside-root';

type Verb = 'Access denied' | 'Write refused';

/** The sessions folders always refused: each root's `.agentloop/sessions` and `$AGENTLOOP_HOME/sessions`. */
function defaultSessionsDirs(roots: readonly string[], env: SandboxOptions['env']): string[] {
  const dirs = roots.map((projectRoot) => resolveSessionsDir({ projectRoot, env: {} }));
  if ((env ?? process.env).AGENTLOOP_HOME) dirs.push(resolveSessionsDir({ env }));
  return dirs;
}

/** The folder as configured and its real path (they differ when a symlink leads to it). */
async function bothPaths(dir: string): Promise<string[]> {
  const real = await realPathOf(dir).catch(() => dir);
  return real === dir ? [dir] : [dir, real];
}

/**
 * The one gate every file access of a bundle goes through. Paths come in absolute and already
 * variable-resolved; the sandbox resolves their real path and keeps reads inside the read roots and
 * writes inside the write root, never in a sessions folder; then it opens the file and checks again
 * where the file it opened lies, and that it is a regular file, before a byte moves. See docs/sandbox.md.
 */
export class Sandbox {
  readonly readRoots: readonly string[];
  readonly writeRoot: string | undefined;
  /** Folders refused to reads and writes (the session stores'), as configured and as real paths. */
  readonly sessionsDirs: readonly string[];
  readonly maxReadBytes: number;
  /** Whether the opened file's location comes from /proc/self/fd (else the portable check). */
  readonly procFd: boolean;
  private readonly options: SandboxOptions;

  private constructor(
    readRoots: string[],
    writeRoot: string | undefined,
    sessionsDirs: string[],
    procFd: boolean,
    options: SandboxOptions,
  ) {
    this.readRoots = readRoots;
    this.writeRoot = writeRoot;
    this.sessionsDirs = sessionsDirs;
    this.procFd = procFd;
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
    this.options = options;
  }

  /** Resolves the roots' and the sessions folders' real paths once. The write root is also readable. */
  static async create(options: SandboxOptions): Promise<Sandbox> {
    const writeRoot = options.writeRoot ? await realPathOf(path.resolve(options.writeRoot)) : undefined;
    const roots = await Promise.all(options.readRoots.map((root) => realPathOf(path.resolve(root))));
    if (writeRoot) roots.push(writeRoot);
    const given = [...(options.sessionsDirs ?? []), ...defaultSessionsDirs(roots, options.env)];
    const sessions = (await Promise.all(given.map((dir) => bothPaths(path.resolve(dir))))).flat();
    const procFd = (options.procFd ?? true) && (await procFdWorks());
    return new Sandbox([...new Set(roots)], writeRoot, [...new Set(sessions)], procFd, options);
  }

  /** The same sandbox with another write root. */
  withWriteRoot(writeRoot: string): Promise<Sandbox> {
    return Sandbox.create({ ...this.options, readRoots: [...this.readRoots], writeRoot });
  }

  /** The same sandbox with more folders reads may reach (skills folders beside a bundle). */
  withReadRoots(extra: readonly string[]): Promise<Sandbox> {
    return Sandbox.create({
      ...this.options,
      readRoots: [...this.readRoots, ...extra],
      ...(this.writeRoot ? { writeRoot: this.writeRoot } : {}),
    });
  }

  /** Throws when `real` lies in a sessions folder. */
  private refuseSessions(input: string, real: string, verb: Verb): void {
    const dir = this.sessionsDirs.find((d) => isInside(d, real));
    if (dir) {
      throw new BundleError(
        'sandbox',
        `${verb}: ${input} is inside the sessions folder ${dir}; saved sessions are never read or written through the tools`,
        { file: input },
      );
    }
  }

  /** Throws unless reads may reach the real path `real`. */
  private assertReadable(input: string, real: string): void {
    if (!this.readRoots.some((root) => isInside(root, real))) {
      throw new BundleError(
        'sandbox',
        `Access denied: ${input} resolves to ${real}, outside the allowed folders (${this.readRoots.join(', ')})`,
        { file: input },
      );
    }
    this.refuseSessions(input, real, 'Access denied');
  }

  /** Throws unless writes may reach the real path `real`. */
  private assertWritable(input: string, real: string): void {
    if (!this.writeRoot) {
      throw new BundleError('sandbox', `Write refused: no output folder is configured (${input})`, {
        file: input,
      });
    }
    if (!isInside(this.writeRoot, real) || real === this.writeRoot) {
      throw new BundleError(
        'sandbox',
        `Write refused: ${input} resolves to ${real}, outside the output folder ${this.writeRoot}`,
        { file: input },
      );
    }
    this.refuseSessions(input, real, 'Write refused');
  }

  /** The real path of `input` if reads may reach it; throws otherwise. */
  async checkRead(input: string): Promise<string> {
    const real = await realPathOf(checkInput(input));
    this.assertReadable(input, real);
    return real;
  }

  /** The real path of `input` if writes may reach it; throws otherwise. */
  async checkWrite(input: string): Promise<string> {
    const real = await realPathOf(checkInput(input));
    this.assertWritable(input, real);
    return real;
  }

  /** exists / missing / outside-root, without reading the file. */
  async status(input: string): Promise<PathStatus> {
    let real: string;
    try {
      real = await this.checkRead(input);
    } catch (error) {
      if (error instanceof BundleError && error.code === 'sandbox') return 'outside-root';
      throw error;
    }
    return (await lstat(real).catch(() => undefined)) ? 'exists' : 'missing';
  }

  /**
   * Reads a UTF-8 file inside the read roots, within the size limit, and reports the load. The path
   * is checked, the file opened (no final symlink, no blocking), and the opened file checked again:
   * where it lies, and that it is a regular file.
   */
  async readText(
    input: string,
    reason: FileLoadReason,
  ): Promise<{ path: string; content: string; bytes: number }> {
    const real = await this.checkRead(input);
    const handle = await openForRead(real, input);
    try {
      const opened = await openedPath(handle, real, input, this.procFd, 'Access denied');
      this.assertReadable(input, opened);
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(input, info);
      if (info.size > this.maxReadBytes) {
        throw new BundleError(
          'too-large',
          `File too large: ${input} is ${info.size} bytes; the limit is ${this.maxReadBytes} bytes`,
          { file: input },
        );
      }
      const content = await handle.readFile({ encoding: 'utf8' });
      const bytes = Buffer.byteLength(content);
      this.options.onFileLoad?.({ path: real, reason, bytes });
      return { path: real, content, bytes };
    } finally {
      await handle.close();
    }
  }

  /**
   * Writes a UTF-8 file inside the write root, creating its folders. The bytes go through the
   * descriptor that was checked: where it lies, a regular file, not a hard link (one name only).
   */
  async writeText(input: string, content: string): Promise<{ path: string; bytes: number }> {
    const real = await this.checkWrite(input);
    const handle = await openForWrite({
      root: this.writeRoot as string,
      real,
      input,
      useProc: this.procFd,
      check: (again) => this.checkWrite(again),
    });
    try {
      const opened = await openedPath(handle, real, input, this.procFd, 'Write refused');
      this.assertWritable(input, opened);
      const info = await handle.stat();
      if (!info.isFile()) throw notRegular(input, info);
      if (info.nlink > 1) {
        throw new BundleError(
          'sandbox',
          `Write refused: ${input} is a hard link (${info.nlink} names for one file); the other names may lie outside the output folder`,
          { file: input },
        );
      }
      await handle.truncate(0);
      await handle.writeFile(content, { encoding: 'utf8' });
    } finally {
      await handle.close();
    }
    return { path: real, bytes: Buffer.byteLength(content) };
  }
}

function notRegular(input: string, info: Stats): BundleError {
  return new BundleError('invalid-input', `Not a regular file: ${input} is ${kindOf(info)}`, { file: input });
}
