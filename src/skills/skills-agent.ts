import path from 'node:path';
import type { BundleAgent } from '../bundle/bundle-agent-types.js';
import { type FileLoadListener, realPathOf, Sandbox } from '../bundle/sandbox/sandbox.js';
import { type AgentDefinition, defineAgent, escapeInstructions } from '../prompt/agent-definition.js';
import type { Tool } from '../tools/define-tool.js';
import type { Skill } from './skill.js';
import { buildSkillCatalog } from './skill-catalog.js';
import { type DiscoverSkillsOptions, discoverSkills, type SkillDiscovery } from './skill-discovery.js';
import { createSkillTools, withSkillTools } from './skill-tools.js';
import type { SkillToolsContext } from './skill-tools-context.js';

// Running skills: a plain assistant that knows the skills (`agentloop run` / `chat` without
// `--agent`), or a BMAD agent with the skills added to its prompt and tools.

/** `createAgent({ skills })`: skills folders, or where the project is and where outputs go too. */
export type SkillsOption =
  | readonly string[]
  | {
      /** Skills folders searched after the project's `.agents/skills` and `.claude/skills`. */
      dirs?: readonly string[];
      /** `{project-root}` (default: the current directory). */
      projectRoot?: string;
      /** Where `save_output` writes (default `<projectRoot>/output`). */
      outputFolder?: string;
      /** Skills already discovered. */
      discovery?: SkillDiscovery;
    };

export interface LoadSkillsAgentOptions extends Omit<DiscoverSkillsOptions, 'projectRoot'> {
  /** `{project-root}` (default: the current directory). */
  projectRoot?: string;
  /** Skills already discovered (then `dirs` is not searched again). */
  discovery?: SkillDiscovery;
  /** Where `save_output` may write (default: `<projectRoot>/output`). */
  outputFolder?: string;
  /** The session store's folder when configured elsewhere: the tools never reach it. */
  sessionsDir?: string;
  /** Where `AGENTLOOP_HOME` is read; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Largest file the tools read (bytes). */
  maxReadBytes?: number;
  /** Called for every file read, with the reason. */
  onFileLoad?: FileLoadListener;
}

/** A plain assistant with skills: its definition, and what UIs and tests look at. */
export interface SkillsAgent {
  /** name `assistant`; instructions with the skill catalog; tools activate_skill, read_file, save_output. */
  definition: AgentDefinition & { tools: Tool[] };
  skills: Skill[];
  discovery: SkillDiscovery;
  sandbox: Sandbox;
  projectRoot: string;
  outputFolder: string;
  /** One line per discovery problem (file, key, what is wrong), for the CLI to print. */
  warnings: string[];
}

function assistantPrompt(projectRoot: string, outputFolder: string): string {
  return [
    `You are a helpful assistant working in the project folder ${projectRoot}.`,
    'TOOLS: USE THEM, DO NOT PRETEND',
    '- read_file reads a file of the project or of a skill; save_output writes a file into the output folder ' +
      `(${outputFolder}). Nothing else on the machine is reachable, and no command can be run.`,
    '- Never say a file is read or saved before the tool result is in front of you; if a tool returns an error, say what went wrong.',
  ].join('\n');
}

/** The discovery problems as lines for people. */
export function skillWarnings(discovery: SkillDiscovery): string[] {
  return discovery.problems.map((p) => `skill ${p.kind}: ${p.message}${p.skipped ? ' (not loaded)' : ''}`);
}

/** Skills ready to run: what was found, the sandbox over them, the tools' context and the catalog block. */
export interface SkillSetup {
  discovery: SkillDiscovery;
  sandbox: Sandbox;
  context: SkillToolsContext;
  /** The system-prompt block (empty when no skill was found). */
  catalog: string;
  projectRoot: string;
  outputFolder: string;
}

/**
 * Discovers the skills (unless given) and makes the one sandbox their tools use: reads reach the
 * project and the skills folders, writes the output folder only (default `<projectRoot>/output`).
 * Never fails for a bad skill: those are in `discovery.problems`.
 */
export async function prepareSkills(options: LoadSkillsAgentOptions = {}): Promise<SkillSetup> {
  const projectRoot = await realPathOf(path.resolve(options.projectRoot ?? process.cwd()));
  const discovery = options.discovery ?? (await discoverSkills({ ...options, projectRoot }));
  const outputFolder = await realPathOf(path.resolve(projectRoot, options.outputFolder ?? 'output'));
  const sandbox = await Sandbox.create({
    readRoots: [projectRoot, ...discovery.roots],
    writeRoot: outputFolder,
    ...(options.sessionsDir ? { sessionsDirs: [options.sessionsDir] } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.maxReadBytes ? { maxReadBytes: options.maxReadBytes } : {}),
    ...(options.onFileLoad ? { onFileLoad: options.onFileLoad } : {}),
  });
  const context: SkillToolsContext = {
    sandbox,
    scope: { projectRoot, variables: { output_folder: outputFolder } },
    outputFolder,
    skills: discovery.skills,
  };
  return {
    discovery,
    sandbox,
    context,
    catalog: buildSkillCatalog(discovery.skills),
    projectRoot,
    outputFolder,
  };
}

/**
 * Discovers the skills and builds a plain assistant around them: a short prompt, the catalog block
 * (names and descriptions only), and the skill tools over one sandbox (reads: the project and the
 * skills folders; writes: the output folder). Problems with skills are warnings; it never fails for them.
 */
export async function loadSkillsAgent(options: LoadSkillsAgentOptions = {}): Promise<SkillsAgent> {
  const setup = await prepareSkills(options);
  const { discovery, projectRoot, outputFolder } = setup;
  const instructions = [assistantPrompt(projectRoot, outputFolder), setup.catalog]
    .filter(Boolean)
    .join('\n\n');
  const definition = defineAgent({
    name: 'assistant',
    description: 'A plain assistant with the Agent Skills of the project',
    instructions: escapeInstructions(instructions),
    tools: createSkillTools(setup.context),
  }) as SkillsAgent['definition'];
  return {
    definition,
    skills: discovery.skills,
    discovery,
    sandbox: setup.sandbox,
    projectRoot,
    outputFolder,
    warnings: skillWarnings(discovery),
  };
}

/**
 * A BMAD agent with skills: its prompt gets the catalog (minus `exclude`, e.g. its own skill), its
 * tools get `activate_skill` and the skill-aware `read_file`, and its sandbox the skills folders.
 */
export async function addSkillsToBundleAgent(
  agent: BundleAgent,
  discovery: SkillDiscovery,
  options: { exclude?: readonly string[] } = {},
): Promise<BundleAgent> {
  if (discovery.skills.length === 0) return agent;
  const sandbox = await agent.sandbox.withReadRoots(discovery.roots);
  const toolsContext: SkillToolsContext = { ...agent.toolsContext, sandbox, skills: discovery.skills };
  const catalog = buildSkillCatalog(discovery.skills, options);
  const definition = {
    ...agent.definition,
    instructions: catalog
      ? `${agent.definition.instructions}\n\n${escapeInstructions(catalog)}`
      : agent.definition.instructions,
    tools: withSkillTools(agent.definition.tools, toolsContext),
  };
  return {
    ...agent,
    definition,
    sandbox,
    toolsContext,
    warnings: [...agent.warnings, ...skillWarnings(discovery)],
  };
}
