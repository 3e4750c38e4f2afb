import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Bmad6Install } from '../bmad6/bmad-install.js';
import { readAgentSkill, shortAgentName } from '../bmad6/bmad6-agent-skill.js';
import { configTomlFiles, loadBmad6Config } from '../bmad6/bmad6-config.js';
import { parseToml } from '../bmad6/toml-file.js';
import { errorMessage } from '../bundle-error.js';
import { parseYamlMap } from '../config-loader.js';
import { Sandbox } from '../sandbox/sandbox.js';
import type {
  ValidatedAgent,
  ValidatedMenuItem,
  ValidationProblem,
  ValidationReport,
} from './validation-report.js';

/** The skill folders of an install's skills folders, by name (the first folder of a name wins). */
async function installedSkills(install: Bmad6Install): Promise<Map<string, string>> {
  const skills = new Map<string, string>();
  for (const root of install.skillDirs) {
    for (const name of (await readdir(root).catch(() => [] as string[])).sort()) {
      if (!skills.has(name)) skills.set(name, path.join(root, name));
    }
  }
  return skills;
}

/**
 * Checks a BMAD 6.12 install (reading only): every agent the config lists or a `bmad-agent-*` skill
 * folder holds, with its menu targets (a skill that is not installed is a problem), and every config
 * file (a TOML or YAML syntax error is a problem naming file, line and key).
 */
export async function validateBmad6(install: Bmad6Install): Promise<ValidationReport> {
  const sandbox = await Sandbox.create({
    readRoots: [install.projectRoot, install.bmadDir, ...install.skillDirs],
  });
  const rel = (p: string) => path.relative(install.projectRoot, p) || '.';
  const problems: ValidationProblem[] = [];
  const problem = (
    file: string,
    key: string,
    value: string,
    status: ValidationProblem['status'],
    message: string,
  ) => problems.push({ file: rel(file), key, value, status, message });
  const configs: ValidationReport['configs'] = [];
  const configFiles = [
    ...configTomlFiles(install.bmadDir),
    ...['core', ...install.modules.filter((m) => m !== 'core')].map((m) =>
      path.join(install.bmadDir, m, 'config.yaml'),
    ),
  ];
  for (const file of configFiles) {
    if ((await sandbox.status(file)) !== 'exists') continue;
    try {
      const { content } = await sandbox.readText(file, 'validate');
      const values = file.endsWith('.toml') ? parseToml(content, file) : parseYamlMap(content, file);
      configs.push({ file: rel(file), keys: Object.keys(values).sort() });
    } catch (error) {
      const key = (error as { key?: string }).key ?? '';
      problem(file, key, '', 'parse-error', errorMessage(error));
    }
  }
  const config = await loadBmad6Config(install, sandbox);
  const skills = await installedSkills(install);
  const names = [
    ...config.agents.map((a) => a.skill),
    ...[...skills.keys()].filter(
      (s) => s.startsWith('bmad-agent-') && !config.agents.some((a) => a.skill === s),
    ),
  ];
  const agents: ValidatedAgent[] = [];
  for (const skill of names) {
    const dir = skills.get(skill);
    const entry = config.agents.find((a) => a.skill === skill);
    if (!dir || (await sandbox.status(path.join(dir, 'SKILL.md'))) !== 'exists') {
      problem(
        config.source,
        `agents.${skill}`,
        skill,
        'missing',
        `agent ${skill} is listed, but no ${skill}/SKILL.md is in ${install.skillDirs.map(rel).join(', ') || '.claude/skills or .agents/skills'}`,
      );
      continue;
    }
    try {
      const agent = await readAgentSkill(install, { skill, dir }, sandbox);
      for (const warning of agent.warnings)
        problem(agent.customizationFiles.at(-1) ?? agent.file, 'agent', '', 'parse-error', warning);
      const menu: ValidatedMenuItem[] = agent.block.menu.map((item) => {
        if (!item.skill) {
          return {
            cmd: item.code,
            label: item.description,
            kind: 'action',
            target: item.prompt,
            targets: [{ kind: 'action', attribute: 'prompt', target: item.prompt ?? '' }],
          };
        }
        const target = skills.get(item.skill);
        const status = target ? 'exists' : 'missing';
        if (!target) {
          problem(
            agent.customizationFiles.at(-1) ?? agent.file,
            `agent.menu.${item.code}.skill`,
            item.skill,
            'missing',
            `menu item ${item.code} activates skill "${item.skill}", which is not installed`,
          );
        }
        return {
          cmd: item.code,
          label: item.description,
          kind: 'skill',
          target: item.skill,
          status,
          targets: [
            {
              kind: 'skill',
              attribute: 'skill',
              target: item.skill,
              status,
              ...(target ? { resolved: target } : {}),
            },
          ],
        };
      });
      agents.push({
        file: rel(agent.file),
        id: skill,
        name: agent.block.name || entry?.name || shortAgentName(skill),
        title: agent.block.title || entry?.title || '',
        icon: agent.block.icon || entry?.icon || '',
        dialect: 'skill',
        bundle: entry?.module ?? '',
        criticalActions: [],
        configFiles: config.files.map(rel),
        menu,
      });
    } catch (error) {
      problem(path.join(dir, 'SKILL.md'), 'agent', '', 'parse-error', errorMessage(error));
    }
  }
  return { root: install.projectRoot, layout: 'bmad6', agents, workflows: [], configs, problems };
}
