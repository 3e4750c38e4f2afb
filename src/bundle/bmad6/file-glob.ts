import { readdir } from 'node:fs/promises';
import path from 'node:path';

const WILDCARD = /[*?[]/;
/** Folders a glob never walks into. */
const SKIPPED = new Set(['node_modules', '.git']);

/** A glob's segments as a regular expression: `**` any folders, `*` within a name, `?` one character. */
function globRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|\\[\]]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

async function walk(dir: string, depth: number, out: string[], limit: number): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (out.length >= limit) return;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && depth > 0 && !SKIPPED.has(entry.name)) await walk(full, depth - 1, out, limit);
    else if (entry.isFile()) out.push(full);
  }
}

/**
 * The files an absolute path or glob names (`/p/docs/*.md`, `/p/**\/context.md`), sorted, at most
 * `limit`. A path without wildcards is returned as is (whether or not it exists). Symlinks are not
 * followed; the caller reads what it gets through the sandbox.
 */
export async function expandGlob(pattern: string, limit = 50): Promise<string[]> {
  const parts = pattern.split('/');
  const first = parts.findIndex((p) => WILDCARD.test(p));
  if (first < 0) return [pattern];
  const base = parts.slice(0, first).join('/') || '/';
  const rest = parts.slice(first).join('/');
  const files: string[] = [];
  await walk(base, rest.includes('**') ? 8 : parts.length - first - 1, files, 10_000);
  const match = globRegExp(rest);
  return files.filter((f) => match.test(path.relative(base, f).split(path.sep).join('/'))).slice(0, limit);
}
