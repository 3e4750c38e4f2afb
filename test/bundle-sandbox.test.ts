import { existsSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type BmadToolsContext, resolveToolPath } from '../src/bundle/bmad-tools.js';
import { BundleError } from '../src/bundle/bundle-error.js';
import { Sandbox } from '../src/bundle/sandbox/sandbox.js';

let dir: string;
let roots: { bundle: string; core: string; project: string; out: string; outside: string };
let sandbox: Sandbox;
let ctx: BmadToolsContext;

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'agentloop-sandbox-')));
  roots = {
    bundle: path.join(dir, 'bundle'),
    core: path.join(dir, 'core'),
    project: path.join(dir, 'project'),
    out: path.join(dir, 'project', 'out'),
    outside: path.join(dir, 'outside'),
  };
  for (const p of Object.values(roots)) await mkdir(p, { recursive: true });
  await writeFile(path.join(roots.outside, 'secret.txt'), 'secret');
  await writeFile(path.join(roots.bundle, 'a.txt'), 'a');
  // Symlinks planted inside the roots: some lead out, some stay in.
  await symlink(roots.outside, path.join(roots.bundle, 'link-out'));
  await symlink(path.join(roots.outside, 'secret.txt'), path.join(roots.bundle, 'secret-link'));
  await symlink(roots.core, path.join(roots.bundle, 'link-in'));
  await symlink(roots.outside, path.join(roots.out, 'escape'));
  await symlink(roots.bundle, path.join(roots.out, 'to-bundle'));
  await symlink(path.join(roots.outside, 'nothing-yet'), path.join(roots.out, 'dangling'));
  sandbox = await Sandbox.create({
    readRoots: [roots.bundle, roots.core, roots.project],
    writeRoot: roots.out,
  });
  ctx = {
    sandbox,
    outputFolder: roots.out,
    scope: {
      projectRoot: roots.project,
      bundleRoot: roots.bundle,
      coreRoot: roots.core,
      variables: { output_folder: roots.out },
    },
  };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const segment = fc.constantFrom(
  '..',
  '.',
  '',
  'a.txt',
  'sub',
  '~',
  '%2e%2e',
  '%2e',
  '..%2f',
  'link-out',
  'link-in',
  'secret-link',
  'escape',
  'to-bundle',
  'dangling',
  'out',
  'bundle',
  'outside',
  'secret.txt',
  'a\0b',
  '/',
  '//',
  '\\..',
);
const prefix = fc.constantFrom(
  '{bundle-root}/',
  '{core-root}/',
  '{project-root}/',
  '{output_folder}/',
  '',
  '/',
  '~/',
  '~',
  '../',
  '/etc/',
);
const generatedPath = fc
  .tuple(prefix, fc.array(segment, { maxLength: 8 }))
  .map(([p, segs]) => p + segs.join('/'));

async function outcome<T>(
  run: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('sandbox properties', () => {
  test('no generated path is readable outside the bundle, core and project roots', async () => {
    const readRoots = [roots.bundle, roots.core, roots.project].map((r) => realpathSync(r));
    await fc.assert(
      fc.asyncProperty(generatedPath, async (input) => {
        const result = await outcome(async () =>
          sandbox.checkRead(resolveToolPath(input, ctx, roots.project, 'file_path')),
        );
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(BundleError);
          return;
        }
        expect(input).not.toContain('\0');
        expect(readRoots.some((r) => inside(r, result.value))).toBe(true);
        const lexical = resolveToolPath(input, ctx, roots.project, 'file_path');
        if (existsSync(lexical)) expect(realpathSync(lexical)).toBe(result.value);
      }),
      { numRuns: 1500 },
    );
  });

  test('no generated path is writable outside the output folder', async () => {
    await fc.assert(
      fc.asyncProperty(generatedPath, async (input) => {
        const result = await outcome(async () =>
          sandbox.checkWrite(resolveToolPath(input, ctx, roots.out, 'file_path')),
        );
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(BundleError);
          return;
        }
        expect(inside(roots.out, result.value) && result.value !== roots.out).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });

  test('%2e stays a literal name, never a parent step', async () => {
    const real = await sandbox.checkRead(
      resolveToolPath('{bundle-root}/%2e%2e/%2e%2e/etc', ctx, roots.project, 'p'),
    );
    expect(real).toBe(path.join(roots.bundle, '%2e%2e', '%2e%2e', 'etc'));
  });
});

describe('planted symlinks', () => {
  test('a symlink inside a root pointing outside is refused', async () => {
    await expect(
      sandbox.readText(path.join(roots.bundle, 'link-out', 'secret.txt'), 'read_file'),
    ).rejects.toThrow(/Access denied: .* resolves to .*outside/);
    await expect(sandbox.readText(path.join(roots.bundle, 'secret-link'), 'read_file')).rejects.toThrow(
      /Access denied/,
    );
    await expect(sandbox.writeText(path.join(roots.out, 'escape', 'x.md'), 'x')).rejects.toThrow(
      /Write refused/,
    );
    await expect(sandbox.writeText(path.join(roots.out, 'dangling'), 'x')).rejects.toThrow(
      /dangling symlink/,
    );
    expect(existsSync(path.join(roots.outside, 'x.md'))).toBe(false);
    expect(existsSync(path.join(roots.outside, 'nothing-yet'))).toBe(false);
  });

  test('a symlink inside pointing inside is fine for reads; writes must still land in the output folder', async () => {
    await writeFile(path.join(roots.core, 'c.txt'), 'core');
    expect((await sandbox.readText(path.join(roots.bundle, 'link-in', 'c.txt'), 'read_file')).content).toBe(
      'core',
    );
    await expect(sandbox.writeText(path.join(roots.out, 'to-bundle', 'x.md'), 'x')).rejects.toThrow(
      /Write refused/,
    );
    await mkdir(path.join(roots.out, 'real-dir'), { recursive: true });
    await symlink(path.join(roots.out, 'real-dir'), path.join(roots.out, 'dir-link'));
    const saved = await sandbox.writeText(path.join(roots.out, 'dir-link', 'deep', 'x.md'), 'ok');
    expect(saved.path).toBe(path.join(roots.out, 'real-dir', 'deep', 'x.md'));
  });

  test('null bytes, home paths and relative paths are refused before touching the file system', async () => {
    await expect(sandbox.checkRead(`${roots.bundle}/a\0.txt`)).rejects.toThrow(/null byte/);
    await expect(sandbox.checkRead('~/x')).rejects.toThrow(/home-relative/);
    await expect(sandbox.checkRead('relative/x')).rejects.toThrow(/not absolute/);
    expect(await sandbox.checkRead(path.join(roots.bundle, 'a.txt'))).toBe(path.join(roots.bundle, 'a.txt'));
  });
});
