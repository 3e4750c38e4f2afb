import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { BundleError } from '../bundle-error.js';

// BMAD 6 installs as `npx bmad-method install` lays them out: `_bmad/` in the project folder.
// 6.0 compiles its agents into `_bmad/<module>/agents/*.md` (the alpha trees' installed form);
// 6.12 writes `_bmad/config.toml` and ships its agents and workflows as skills (`.claude/skills/`).

/** The command that installs BMAD into the current folder, for messages. */
export const BMAD_INSTALL_COMMAND = 'npx bmad-method install --modules bmm --tools claude-code --yes';

/** The name of the install folder in a BMAD 6 project. */
export const BMAD6_DIR = '_bmad';

/** Where a BMAD 6.12 install's skills may sit, relative to the project folder. */
export const BMAD_SKILL_DIRS = ['.claude/skills', '.agents/skills'] as const;

/** A BMAD 6.12 install: `_bmad/config.toml` and skills. */
export interface Bmad6Install {
  /** The folder holding `_bmad/`: `{project-root}`. */
  projectRoot: string;
  /** `_bmad/` itself. */
  bmadDir: string;
  /** Module folders of `_bmad/` (`core`, `bmm`, ...). */
  modules: string[];
  /** The project's skills folders that exist (`.claude/skills`, `.agents/skills`). */
  skillDirs: string[];
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}

/** Folders of `_bmad/` that are not modules. */
const NOT_MODULES = new Set(['custom', 'scripts', 'render']);

/**
 * The BMAD 6.12 install `dir` is or holds: `dir/_bmad/config.toml`, or `dir` is that `_bmad/`.
 * Undefined for anything else (a 6.0 `_bmad/` has no config.toml and loads as an installed tree).
 */
export async function findBmad6Install(dir: string): Promise<Bmad6Install | undefined> {
  const abs = path.resolve(dir);
  const bmadDir = path.basename(abs) === BMAD6_DIR ? abs : path.join(abs, BMAD6_DIR);
  if (!(await isFile(path.join(bmadDir, 'config.toml')))) return undefined;
  const projectRoot = path.dirname(bmadDir);
  const entries = await readdir(bmadDir, { withFileTypes: true });
  const modules = entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('_') && !e.name.startsWith('.'))
    .map((e) => e.name)
    .filter((name) => !NOT_MODULES.has(name))
    .sort();
  const skillDirs: string[] = [];
  for (const rel of BMAD_SKILL_DIRS) {
    if (await isDir(path.join(projectRoot, rel))) skillDirs.push(path.join(projectRoot, rel));
  }
  return { projectRoot, bmadDir, modules, skillDirs };
}

/** Up to `limit` `*.agent.yaml` files under `dir` (depth 4, node_modules and dot folders skipped). */
async function agentSources(dir: string, depth = 4, limit = 3): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (found.length >= limit) break;
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.endsWith('.agent.yaml')) found.push(full);
    else if (entry.isDirectory() && depth > 0)
      found.push(...(await agentSources(full, depth - 1, limit - found.length)));
  }
  return found;
}

/**
 * Throws the one clear message for a BMAD source tree (agent sources `*.agent.yaml`, or a
 * `src/<module>/module.yaml`): agentloop runs what the installer produces, so install it first.
 */
export async function refuseBmadSource(dir: string): Promise<void> {
  const abs = path.resolve(dir);
  const sources = await agentSources(abs);
  let moduleFile: string | undefined;
  for (const sub of ['src', '.']) {
    for (const name of await readdir(path.join(abs, sub)).catch(() => [] as string[])) {
      if (!moduleFile && (await isFile(path.join(abs, sub, name, 'module.yaml'))))
        moduleFile = path.join(abs, sub, name, 'module.yaml');
    }
  }
  const evidence = sources[0] ?? moduleFile;
  if (!evidence) return;
  throw new BundleError(
    'invalid-input',
    `${abs} is a BMAD source tree (${path.relative(abs, evidence)}), not an install: agentloop runs ` +
      `installed BMAD. Install it into your project first: cd <your project> && ${BMAD_INSTALL_COMMAND}, ` +
      'then: agentloop chat --project <your project> --agent pm',
    { file: evidence },
  );
}
