import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './build-dist.js';
import { withLock } from './folder-lock.js';

/**
 * The BMAD releases the tests install, each pinned in package.json's devDependencies (6.0 under an
 * npm alias). `bin` is the installer's entry in the package.
 */
export const BMAD_RELEASES = {
  '6.12': { pkg: 'bmad-method', bin: 'tools/installer/bmad-cli.js' },
  '6.0': { pkg: 'bmad-method-6-0', bin: 'tools/bmad-npx-wrapper.js' },
} as const;

export type BmadRelease = keyof typeof BMAD_RELEASES;

/** The user name the test installs answer with (`--user-name`). */
export const BMAD_TEST_USER = 'Tess';

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined)) !== undefined;
}

/**
 * Runs a BMAD release's own installer, as users do (`npx bmad-method install --modules bmm --tools
 * claude-code --yes`), into `dir`. `--directory` is given because the installer asks for the folder
 * even with `--yes`; stdin is closed so a question it still asks fails instead of hanging.
 */
export async function runBmadInstaller(release: BmadRelease, dir: string): Promise<void> {
  const { pkg, bin } = BMAD_RELEASES[release];
  const installer = path.join(repoRoot, 'node_modules', pkg, bin);
  const args = [installer, 'install', '--directory', dir, '--modules', 'bmm', '--tools', 'claude-code'];
  args.push('--yes', '--user-name', BMAD_TEST_USER);
  try {
    await promisify(execFile)(process.execPath, args, {
      cwd: dir,
      timeout: 120_000,
      env: { ...process.env, CI: '1', NO_COLOR: '1' },
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${pkg} install failed in ${dir}: ${e.message}\n${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
  if (!(await exists(path.join(dir, '_bmad')))) {
    throw new Error(`${pkg} install in ${dir} finished without creating _bmad/`);
  }
}

/**
 * A project folder with `release` installed by its own installer, made once per installed package
 * version and kept under the OS temp folder (read it, never write it: {@link freshBmadProject} gives a
 * copy to change).
 */
export async function bmadProject(release: BmadRelease): Promise<string> {
  const { pkg } = BMAD_RELEASES[release];
  const manifest = JSON.parse(
    await readFile(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8'),
  ) as { version: string };
  const cache = path.join(tmpdir(), 'agentloop-bmad-installs');
  await mkdir(cache, { recursive: true });
  // The installer names the project after its folder: every install sits in a folder named `project`.
  const slot = path.join(cache, `bmad-method-${manifest.version}-${BMAD_TEST_USER}`);
  const project = path.join(slot, 'project');
  return withLock(`${slot}.lock`, async () => {
    if (!(await exists(path.join(project, '_bmad')))) {
      const staging = await mkdtemp(path.join(cache, 'staging-'));
      try {
        await mkdir(path.join(staging, 'project'));
        await runBmadInstaller(release, path.join(staging, 'project'));
        await rm(slot, { recursive: true, force: true });
        await rename(staging, slot);
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    }
    return realpath(project);
  });
}

/** A copy of {@link bmadProject} in a new temp folder, for a test that writes (remove its parent after). */
export async function freshBmadProject(release: BmadRelease): Promise<string> {
  const source = await bmadProject(release);
  const parent = await realpath(await mkdtemp(path.join(tmpdir(), `agentloop-bmad-${release}-`)));
  const dir = path.join(parent, 'project');
  await cp(source, dir, { recursive: true });
  return dir;
}
