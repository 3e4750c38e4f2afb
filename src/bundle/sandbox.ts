import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { BundleError } from './bundle-error.js';

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
  | 'validate';

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
  maxReadBytes?: number;
  onFileLoad?: FileLoadListener;
}

/** Where a path stands relative to the read roots. */
export type PathStatus = 'exists' | 'missing' | 'outside-root';

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Refuses inputs that must never reach the file system: null bytes, `~`, relative paths. */
function checkInput(input: string): string {
  if (typeof input !== 'string' || input.length === 0) {
    throw new BundleError('sandbox', 'Access denied: empty path');
  }
  if (input.includes('\0')) {
    throw new BundleError('sandbox', `Access denied: path contains a null byte: ${JSON.stringify(input)}`, {
      file: input,
    });
  }
  if (input.startsWith('~')) {
    throw new BundleError('sandbox', `Access denied: home-relative paths are not allowed: ${input}`, {
      file: input,
    });
  }
  if (!path.isAbsolute(input)) {
    throw new BundleError('sandbox', `Access denied: path is not absolute after resolution: ${input}`, {
      file: input,
    });
  }
  return path.resolve(input);
}

/**
 * The real path of `p` with every symlink resolved. A path that does not exist yet resolves through
 * its deepest existing ancestor (so a write target below a symlinked folder is judged by where the
 * folder really is); a dangling symlink or a symlink loop on the way is refused.
 */
export async function realPathOf(p: string): Promise<string> {
  let current = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') {
        throw new BundleError('sandbox', `Access denied: symlink loop at ${current}`, { file: p });
      }
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const link = await lstat(current).catch(() => undefined);
      if (link?.isSymbolicLink()) {
        throw new BundleError('sandbox', `Access denied: ${current} is a dangling symlink`, { file: p });
      }
      const parent = path.dirname(current);
      if (parent === current) return path.join(current, ...rest.reverse());
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/**
 * The one gate every file access of a bundle goes through. Paths come in absolute and already
 * variable-resolved; the sandbox resolves their real path and keeps reads inside the read roots and
 * writes inside the write root. See docs/sandbox.md.
 */
export class Sandbox {
  readonly readRoots: readonly string[];
  readonly writeRoot: string | undefined;
  readonly maxReadBytes: number;
  private readonly onFileLoad: FileLoadListener | undefined;

  private constructor(readRoots: string[], writeRoot: string | undefined, options: SandboxOptions) {
    this.readRoots = readRoots;
    this.writeRoot = writeRoot;
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
    this.onFileLoad = options.onFileLoad;
  }

  /** Resolves the roots' real paths once. The write root is also readable. */
  static async create(options: SandboxOptions): Promise<Sandbox> {
    const writeRoot = options.writeRoot ? await realPathOf(path.resolve(options.writeRoot)) : undefined;
    const roots = await Promise.all(options.readRoots.map((root) => realPathOf(path.resolve(root))));
    if (writeRoot) roots.push(writeRoot);
    return new Sandbox([...new Set(roots)], writeRoot, options);
  }

  /** The same sandbox with another write root. */
  withWriteRoot(writeRoot: string): Promise<Sandbox> {
    return Sandbox.create({
      readRoots: [...this.readRoots],
      writeRoot,
      maxReadBytes: this.maxReadBytes,
      onFileLoad: this.onFileLoad,
    });
  }

  /** The real path of `input` if reads may reach it; throws otherwise. */
  async checkRead(input: string): Promise<string> {
    const real = await realPathOf(checkInput(input));
    if (!this.readRoots.some((root) => isInside(root, real))) {
      throw new BundleError(
        'sandbox',
        `Access denied: ${input} resolves to ${real}, outside the allowed folders (${this.readRoots.join(', ')})`,
        { file: input },
      );
    }
    return real;
  }

  /** The real path of `input` if writes may reach it; throws otherwise. */
  async checkWrite(input: string): Promise<string> {
    const real = await realPathOf(checkInput(input));
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

  /** Reads a UTF-8 file inside the read roots, within the size limit, and reports the load. */
  async readText(
    input: string,
    reason: FileLoadReason,
  ): Promise<{ path: string; content: string; bytes: number }> {
    const real = await this.checkRead(input);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw new BundleError('not-found', `File not found: ${input}`, { file: input, cause: error });
      }
      throw new BundleError('sandbox', `Cannot open ${input}: ${code ?? String(error)}`, {
        file: input,
        cause: error,
      });
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new BundleError('invalid-input', `Not a file: ${input}`, { file: input });
      if (info.size > this.maxReadBytes) {
        throw new BundleError(
          'too-large',
          `File too large: ${input} is ${info.size} bytes; the limit is ${this.maxReadBytes} bytes`,
          { file: input },
        );
      }
      const content = await handle.readFile({ encoding: 'utf8' });
      const bytes = Buffer.byteLength(content);
      this.onFileLoad?.({ path: real, reason, bytes });
      return { path: real, content, bytes };
    } finally {
      await handle.close();
    }
  }

  /** Writes a UTF-8 file inside the write root, creating its folders. */
  async writeText(input: string, content: string): Promise<{ path: string; bytes: number }> {
    const real = await this.checkWrite(input);
    await mkdir(path.dirname(real), { recursive: true });
    // The folders may have changed between the check and mkdir: check the parent's real path again.
    await this.checkWrite(path.join(await realpath(path.dirname(real)), path.basename(real)));
    const handle = await open(
      real,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    );
    try {
      await handle.writeFile(content, { encoding: 'utf8' });
    } finally {
      await handle.close();
    }
    return { path: real, bytes: Buffer.byteLength(content) };
  }
}
