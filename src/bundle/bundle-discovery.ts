import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { type AgentFile, looksLikeAgentFile, parseAgentFile } from './agent-file-parser.js';
import { BundleError, errorMessage } from './bundle-error.js';
import { Sandbox } from './sandbox/sandbox.js';

/**
 * `installed`: a real BMAD tree (`bmad/core`, `bmad/<module>`, or BMAD 6.0's `_bmad/`); `spec`:
 * bundle.yaml + agents/ + workflows/; `bmad6`: a BMAD 6.12 install (`_bmad/config.toml`, agents as skills).
 */
export type BundleLayout = 'installed' | 'spec' | 'bmad6';

/** A bundle: a spec-layout bundle root, or a module of an installed tree. */
export interface BundleInfo {
  name: string;
  root: string;
  /** `config.yaml` in the bundle root, when present. */
  configPath?: string;
  isCore: boolean;
}

/** What a folder given by the user turned out to be. */
export interface BundleTree {
  layout: BundleLayout;
  /** `{project-root}`: the folder holding `bmad/` for an installed tree, the bundle root otherwise. */
  projectRoot: string;
  /** The `bmad/` folder of an installed tree. */
  bmadRoot?: string;
  coreRoot?: string;
  bundles: BundleInfo[];
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}

async function subdirs(p: string): Promise<string[]> {
  const entries = await readdir(p, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

async function bundleInfo(root: string, isCore: boolean): Promise<BundleInfo> {
  const configPath = path.join(root, 'config.yaml');
  return {
    name: path.basename(root),
    root,
    configPath: (await isFile(configPath)) ? configPath : undefined,
    isCore,
  };
}

/** Names of an installed tree's folder: `bmad/` (alpha trees) and `_bmad/` (BMAD 6.0 installs). */
const INSTALL_DIRS = ['bmad', '_bmad'];

/** The `bmad/` (or `_bmad/`) folder above or at `dir`, if `dir` sits in an installed tree. */
async function findBmadRoot(dir: string): Promise<string | undefined> {
  for (const name of INSTALL_DIRS) if (await isDir(path.join(dir, name))) return path.join(dir, name);
  for (let current = dir; ; current = path.dirname(current)) {
    if (
      INSTALL_DIRS.includes(path.basename(current)) &&
      ((await isDir(path.join(current, 'core'))) || (await isDir(path.join(current, '_cfg'))))
    ) {
      return current;
    }
    if (path.dirname(current) === current) return undefined;
  }
}

/** The core folder for a spec-layout bundle: `<ancestor>/bmad/core` or `<ancestor>/core`, nearest first. */
async function findCoreRoot(dir: string): Promise<string | undefined> {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    for (const candidate of [path.join(current, 'bmad', 'core'), path.join(current, 'core')]) {
      if (await isDir(path.join(candidate, 'tasks'))) return candidate;
    }
    if (path.dirname(current) === current) return undefined;
  }
}

/**
 * Works out what `root` is: a project folder holding `bmad/`, a `bmad/` folder, a module of one, a
 * spec-layout bundle root, or a folder of spec-layout bundles. Touches directory listings only.
 */
export async function detectTree(root: string): Promise<BundleTree> {
  const abs = path.resolve(root);
  if (!(await isDir(abs))) throw new BundleError('not-found', `No such folder: ${abs}`, { file: abs });
  const specLike = (await isFile(path.join(abs, 'bundle.yaml'))) || !(await findBmadRoot(abs));
  const bmadRoot = specLike ? undefined : await findBmadRoot(abs);
  if (bmadRoot) {
    const modules = (await subdirs(bmadRoot)).filter((name) => !name.startsWith('_'));
    const coreRoot = modules.includes('core') ? path.join(bmadRoot, 'core') : undefined;
    return {
      layout: 'installed',
      projectRoot: path.dirname(bmadRoot),
      bmadRoot,
      coreRoot,
      bundles: await Promise.all(modules.map((m) => bundleInfo(path.join(bmadRoot, m), m === 'core'))),
    };
  }
  const coreRoot = await findCoreRoot(abs);
  if (await isDir(path.join(abs, 'agents'))) {
    return { layout: 'spec', projectRoot: abs, coreRoot, bundles: [await bundleInfo(abs, false)] };
  }
  const bundles: BundleInfo[] = [];
  for (const name of await subdirs(abs)) {
    const dir = path.join(abs, name);
    if ((await isFile(path.join(dir, 'bundle.yaml'))) || (await isDir(path.join(dir, 'agents')))) {
      bundles.push(await bundleInfo(dir, false));
    }
  }
  return { layout: 'spec', projectRoot: abs, coreRoot, bundles };
}

async function walk(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full, keep)));
    else if (entry.isFile() && keep(entry.name)) out.push(full);
  }
  return out.sort();
}

/** Candidate agent files of a bundle: `.md` files under `agents/`, README and backups left out. No reads. */
export function listAgentFiles(bundleRoot: string): Promise<string[]> {
  return walk(path.join(bundleRoot, 'agents'), (name) => /\.md$/i.test(name) && !/^readme\.md$/i.test(name));
}

/** Every `workflow.yaml` under a bundle's `workflows/`. No reads. */
export function listWorkflowFiles(bundleRoot: string): Promise<string[]> {
  return walk(
    path.join(bundleRoot, 'workflows'),
    (name) => name === 'workflow.yaml' || name === 'workflow.yml',
  );
}

/** Every steps-based markdown workflow (`workflow.md`, `workflow-<name>.md`) under a bundle's `workflows/`. No reads. */
export function listMarkdownWorkflowFiles(bundleRoot: string): Promise<string[]> {
  return walk(path.join(bundleRoot, 'workflows'), (name) => /^workflow(-[^/]+)?\.md$/i.test(name));
}

/** An agent file found by {@link discoverAgents}: parsed, or the error that stopped it. */
export type DiscoveredAgent =
  | { file: string; bundle: BundleInfo; agent: AgentFile; error?: undefined }
  | { file: string; bundle: BundleInfo; agent?: undefined; error: string };

/**
 * Lists the agents under `root` (any form {@link detectTree} accepts). Files without an `<agent>`
 * element (customization stubs, notes) are skipped; a malformed agent is listed with its error.
 * Reads go through `sandbox` (one over the tree when not given).
 */
export async function discoverAgents(root: string, sandbox?: Sandbox): Promise<DiscoveredAgent[]> {
  const tree = await detectTree(root);
  const reader =
    sandbox ?? (await Sandbox.create({ readRoots: [tree.projectRoot, ...tree.bundles.map((b) => b.root)] }));
  const found: DiscoveredAgent[] = [];
  for (const bundle of tree.bundles) {
    for (const file of await listAgentFiles(bundle.root)) {
      const { content: text } = await reader.readText(file, 'discovery');
      if (!looksLikeAgentFile(text)) continue;
      try {
        found.push({ file, bundle, agent: parseAgentFile(text, file) });
      } catch (error) {
        found.push({ file, bundle, error: errorMessage(error) });
      }
    }
  }
  return found;
}
