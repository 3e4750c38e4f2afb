import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BundleError, errorMessage } from '../bundle-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { Bmad6Install } from './bmad-install.js';
import { mergeCustomization } from './bmad-merge.js';
import type { Bmad6AgentEntry } from './bmad6-config.js';
import { parseToml, type TomlTable } from './toml-file.js';

// A BMAD 6.12 agent is a skill (`bmad-agent-pm`) whose customize.toml holds an `[agent]` block:
// persona, menu, persistent facts, activation steps. This file finds it and resolves that block.

/** One item of an agent's menu: a code, a description, and a skill to activate or a prompt to run. */
export interface Bmad6MenuItem {
  code: string;
  description: string;
  skill?: string;
  prompt?: string;
}

/** The `[agent]` block of a 6.12 agent skill, merged base -> team -> user. */
export interface Bmad6AgentBlock {
  name: string;
  title: string;
  icon: string;
  role: string;
  identity: string;
  communicationStyle: string;
  principles: string[];
  persistentFacts: string[];
  activationStepsPrepend: string[];
  activationStepsAppend: string[];
  menu: Bmad6MenuItem[];
}

/** An agent skill, read: its SKILL.md and its merged customization. */
export interface Bmad6AgentSkill {
  /** The skill's name (`bmad-agent-pm`). */
  skill: string;
  /** Its folder. */
  dir: string;
  /** Its SKILL.md. */
  file: string;
  frontMatter: Record<string, unknown>;
  /** SKILL.md without its front matter. */
  body: string;
  block: Bmad6AgentBlock;
  /** The customization files merged, lowest first. */
  customizationFiles: string[];
  /** Override files that could not be used, each naming file and key. */
  warnings: string[];
}

/** The short name of an agent skill: `bmad-agent-pm` is `pm`. */
export function shortAgentName(skill: string): string {
  return skill.replace(/^bmad-agent-/, '');
}

/**
 * The skill name `wanted` means among the config's agents: the skill name itself, its short form
 * (`pm`), or the persona's name (`John`), ignoring case. Otherwise `bmad-agent-<wanted>` or `wanted`
 * when such a skill folder exists. A BundleError lists the agents when nothing matches.
 */
export async function resolveAgentSkill(
  install: Bmad6Install,
  agents: Bmad6AgentEntry[],
  wanted: string,
  sandbox: Sandbox,
): Promise<{ skill: string; dir: string }> {
  const w = wanted.trim().toLowerCase();
  const entry = agents.find(
    (a) =>
      a.skill.toLowerCase() === w ||
      shortAgentName(a.skill).toLowerCase() === w ||
      a.name?.toLowerCase() === w,
  );
  const candidates = entry ? [entry.skill] : [`bmad-agent-${w}`, w];
  for (const skill of candidates) {
    for (const root of install.skillDirs) {
      const dir = path.join(root, skill);
      if ((await sandbox.status(path.join(dir, 'SKILL.md'))) === 'exists') return { skill, dir };
    }
  }
  const listed = agents.map((a) => `${shortAgentName(a.skill)} (${a.skill}${a.name ? `, ${a.name}` : ''})`);
  if (entry) {
    throw new BundleError(
      'not-found',
      `Agent "${wanted}" is ${entry.skill} in ${path.join(install.bmadDir, 'config.toml')}, but no ${entry.skill}/SKILL.md ` +
        `is in ${install.skillDirs.join(', ') || '.claude/skills or .agents/skills (neither exists)'}: reinstall BMAD with --tools claude-code`,
      { file: path.join(install.bmadDir, 'config.toml'), key: `agents.${entry.skill}` },
    );
  }
  throw new BundleError(
    'unknown-agent',
    `Unknown agent "${wanted}" in ${install.bmadDir}. Agents: ${listed.join(', ') || '(none)'}`,
    { file: path.join(install.bmadDir, 'config.toml'), key: wanted },
  );
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return value.trim() ? [value] : [];
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '')
    : [];
}

function str(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The menu items of a merged `[agent]` block; an item without a code, or with neither skill nor prompt, is a warning. */
function menuItems(raw: unknown, file: string, warnings: string[]): Bmad6MenuItem[] {
  const items: Bmad6MenuItem[] = [];
  for (const [i, value] of (Array.isArray(raw) ? raw : []).entries()) {
    const item = (value && typeof value === 'object' ? value : {}) as TomlTable;
    const code = str(item.code);
    const skill = str(item.skill) || undefined;
    const prompt = str(item.prompt) || undefined;
    if (!code || (!skill && !prompt)) {
      warnings.push(
        `${file}: agent.menu[${i}] ${code ? `"${code}" has neither skill nor prompt` : 'has no code'}; it is left out of the menu`,
      );
      continue;
    }
    items.push({
      code,
      description: str(item.description),
      ...(skill ? { skill } : {}),
      ...(prompt ? { prompt } : {}),
    });
  }
  return items;
}

/**
 * Reads an agent skill through the sandbox: SKILL.md (front matter and body) and the `[agent]` block of
 * `customize.toml` merged with `_bmad/custom/<skill>.toml` (team) and `<skill>.user.toml` (personal) by
 * BMAD's rules. A broken SKILL.md or base customize.toml is an error (the agent is not sound); a broken
 * override is a warning naming file and key, and is left out.
 */
export async function readAgentSkill(
  install: Bmad6Install,
  found: { skill: string; dir: string },
  sandbox: Sandbox,
): Promise<Bmad6AgentSkill> {
  const file = path.join(found.dir, 'SKILL.md');
  const { content } = await sandbox.readText(file, 'agent');
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(content);
  let frontMatter: Record<string, unknown> = {};
  if (match) {
    try {
      const data = parseYaml(match[1] ?? '') as unknown;
      if (data && typeof data === 'object') frontMatter = data as Record<string, unknown>;
    } catch (error) {
      throw new BundleError(
        'parse',
        `Invalid front matter in ${file}: ${errorMessage(error).split('\n')[0]}`,
        { file },
      );
    }
  }
  const body = match ? content.slice(match[0].length) : content;
  const warnings: string[] = [];
  const customizationFiles: string[] = [];
  const base = path.join(found.dir, 'customize.toml');
  let merged: TomlTable = {};
  if ((await sandbox.status(base)) === 'exists') {
    merged = parseToml((await sandbox.readText(base, 'agent')).content, base);
    customizationFiles.push(base);
  }
  for (const override of [`${found.skill}.toml`, `${found.skill}.user.toml`]) {
    const overrideFile = path.join(install.bmadDir, 'custom', override);
    if ((await sandbox.status(overrideFile)) !== 'exists') continue;
    try {
      merged = mergeCustomization(
        merged,
        parseToml((await sandbox.readText(overrideFile, 'config')).content, overrideFile),
      );
      customizationFiles.push(overrideFile);
    } catch (error) {
      warnings.push(`${errorMessage(error)} (this override is left out)`);
    }
  }
  const agent = (merged.agent && typeof merged.agent === 'object' ? merged.agent : {}) as TomlTable;
  const heading = /^#\s+(.+?)\s+[—-]+\s+(.+)$/m.exec(body);
  const block: Bmad6AgentBlock = {
    name: str(agent.name) || heading?.[1]?.trim() || found.skill,
    title: str(agent.title) || heading?.[2]?.trim() || '',
    icon: str(agent.icon),
    role: str(agent.role),
    identity: str(agent.identity),
    communicationStyle: str(agent.communication_style),
    principles: strings(agent.principles),
    persistentFacts: strings(agent.persistent_facts),
    activationStepsPrepend: strings(agent.activation_steps_prepend),
    activationStepsAppend: strings(agent.activation_steps_append),
    menu: menuItems(agent.menu, customizationFiles.at(-1) ?? base, warnings),
  };
  return { skill: found.skill, dir: found.dir, file, frontMatter, body, block, customizationFiles, warnings };
}
