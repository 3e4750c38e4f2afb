import path from 'node:path';
import { errorMessage } from '../bundle-error.js';
import { parseYamlMap, scalarEntries } from '../config-loader.js';
import { fillVariables } from '../path-variables.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { Bmad6Install } from './bmad-install.js';
import { mergeCustomization } from './bmad-merge.js';
import { parseToml, type TomlTable } from './toml-file.js';

/** An agent as `[agents.<skill>]` of `_bmad/config.toml` describes it. */
export interface Bmad6AgentEntry {
  /** The skill's name, the table's key (`bmad-agent-pm`). */
  skill: string;
  module?: string;
  name?: string;
  title?: string;
  icon?: string;
  description?: string;
}

/** A BMAD 6.12 install's configuration, merged. */
export interface Bmad6Config {
  /** `{name}` values: `[core]`, the module's table and its `config.yaml`, `{project-root}` resolved. */
  values: Record<string, string>;
  /** The agents the config lists, by skill name. */
  agents: Bmad6AgentEntry[];
  /** Files read, in order. */
  files: string[];
  /** Files that could not be used, each naming file (and key): the rest of the config still loads. */
  warnings: string[];
  /** `_bmad/config.toml`, the file `{config_source}` names. */
  source: string;
}

/** The TOML layers of the config, lowest first: installer base, installer personal, team, personal. */
export function configTomlFiles(bmadDir: string): string[] {
  return [
    path.join(bmadDir, 'config.toml'),
    path.join(bmadDir, 'config.user.toml'),
    path.join(bmadDir, 'custom', 'config.toml'),
    path.join(bmadDir, 'custom', 'config.user.toml'),
  ];
}

function table(value: unknown): TomlTable {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as TomlTable) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

/**
 * Reads a 6.12 install's configuration through the sandbox: each module's `_bmad/<module>/config.yaml`
 * (core first), then `_bmad/config.toml` under `config.user.toml`, `custom/config.toml` and
 * `custom/config.user.toml` (merged by BMAD's rules), whose `[core]` and `[modules.<module>]` tables win.
 * `module` limits the module tables to one (an agent's); values resolve `{project-root}` and each other.
 * A missing file is skipped; one that does not parse is a warning naming it (and the key, for TOML).
 */
export async function loadBmad6Config(
  install: Bmad6Install,
  sandbox: Sandbox,
  module?: string,
): Promise<Bmad6Config> {
  const files: string[] = [];
  const warnings: string[] = [];
  const flat: Record<string, string> = {};
  const modules = ['core', ...install.modules.filter((m) => m !== 'core' && (!module || m === module))];
  for (const name of modules) {
    const file = path.join(install.bmadDir, name, 'config.yaml');
    if ((await sandbox.status(file)) !== 'exists') continue;
    try {
      const { content } = await sandbox.readText(file, 'config');
      Object.assign(flat, scalarEntries(parseYamlMap(content, file)));
      files.push(file);
    } catch (error) {
      warnings.push(errorMessage(error));
    }
  }
  let merged: TomlTable = {};
  for (const file of configTomlFiles(install.bmadDir)) {
    if ((await sandbox.status(file)) !== 'exists') continue;
    try {
      const { content } = await sandbox.readText(file, 'config');
      merged = mergeCustomization(merged, parseToml(content, file));
      files.push(file);
    } catch (error) {
      warnings.push(`${errorMessage(error)} (this file is left out)`);
    }
  }
  Object.assign(flat, scalarEntries(table(merged.core)));
  const moduleTables = table(merged.modules);
  for (const name of Object.keys(moduleTables).sort()) {
    if (!module || name === module) Object.assign(flat, scalarEntries(table(moduleTables[name])));
  }
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(flat)) {
    values[key] = fillVariables(value, { projectRoot: install.projectRoot, variables: flat });
  }
  const agents = Object.entries(table(merged.agents)).map(([skill, raw]) => {
    const entry = table(raw);
    return {
      skill,
      module: text(entry.module),
      name: text(entry.name),
      title: text(entry.title),
      icon: text(entry.icon),
      description: text(entry.description),
    };
  });
  return { values, agents, files, warnings, source: path.join(install.bmadDir, 'config.toml') };
}
