import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { BundleError } from '../bundle-error.js';

/** Whether `candidate` is `root` or lies below it (by `path.relative`, never by string prefix). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Refuses inputs that must never reach the file system: null bytes, `~`, relative paths. */
export function checkInput(input: string): string {
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
