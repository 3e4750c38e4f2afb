import path from 'node:path';
import type { AgentFile, MenuItem } from '../agent-file-parser.js';
import { type BmadToolsContext, createBmadTools } from '../bmad-tools.js';
import type { BundleAgent, LoadBundleAgentOptions } from '../bundle-agent-types.js';
import { compileBundleDefinition } from '../bundle-definition.js';
import { BundleError, errorMessage } from '../bundle-error.js';
import { fillVariables } from '../path-variables.js';
import { realPathOf, Sandbox } from '../sandbox/sandbox.js';
import type { Bmad6Install } from './bmad-install.js';
import { type Bmad6AgentSkill, readAgentSkill, resolveAgentSkill } from './bmad6-agent-skill.js';
import { loadBmad6Config } from './bmad6-config.js';
import { bmad6MenuChoice, buildBmad6Greeting, buildBmad6Prompt } from './bmad6-prompt.js';
import { expandGlob } from './file-glob.js';

/** The output folder of a BMAD install when its config names none: the installer's default. */
export const BMAD_DEFAULT_OUTPUT = '_bmad-output';

/** The agent skill in the one model both alpha dialects load into (menu items become `skill`/`action` targets). */
function asAgentFile(agent: Bmad6AgentSkill): AgentFile {
  const b = agent.block;
  const menu: MenuItem[] = b.menu.map((item) => {
    const target = item.skill ?? item.prompt ?? '';
    const kind = item.skill ? 'skill' : 'action';
    return {
      cmd: item.code,
      label: item.description,
      kind,
      target,
      targets: [{ kind, attribute: kind === 'skill' ? 'skill' : 'prompt', target }] as MenuItem['targets'],
    };
  });
  return {
    file: agent.file,
    id: agent.skill,
    name: b.name,
    title: b.title,
    icon: b.icon,
    dialect: 'skill',
    fencedXml: false,
    frontMatter: agent.frontMatter,
    persona: {
      role: b.role,
      identity: b.identity,
      communicationStyle: b.communicationStyle,
      principles: b.principles.join('\n'),
    },
    criticalActions: [],
    hasCriticalActionsElement: false,
    activationSteps: [],
    rules: [],
    menu,
    prompts: {},
  };
}

/**
 * The `persistent_facts` of an agent as context messages: a literal entry as written, a `file:` entry
 * (a path or glob, variables resolved) as the content of each file it names. A `file:` entry that
 * names nothing is a warning.
 */
async function loadPersistentFacts(
  facts: string[],
  sandbox: Sandbox,
  fill: (text: string) => string,
  projectRoot: string,
  warnings: string[],
): Promise<string[]> {
  const messages: string[] = [];
  for (const fact of facts) {
    if (!fact.startsWith('file:')) {
      messages.push(`[Persistent fact] ${fill(fact)}`);
      continue;
    }
    const pattern = path.resolve(projectRoot, fill(fact.slice('file:'.length).trim()));
    const files = await expandGlob(pattern);
    let loaded = 0;
    let failed = false;
    for (const file of files) {
      try {
        const { path: real, content } = await sandbox.readText(file, 'critical-action');
        messages.push(`[Persistent fact] Loaded file: ${real}\n\n${content}`);
        loaded++;
      } catch (error) {
        failed = true;
        warnings.push(`persistent fact "${fact}": ${errorMessage(error)}`);
      }
    }
    if (loaded === 0 && !failed) warnings.push(`persistent fact "${fact}": no file matches ${pattern}`);
  }
  return messages;
}

/**
 * Loads an agent of a BMAD 6.12 install (`bmad-agent-pm`, `pm` or `John`) as agentloop's own
 * activation of the skill: the merged `[agent]` block, the config, the persistent facts, the greeting
 * and the menu, compiled into an `AgentDefinition` with the BMAD tools (add the skills with the
 * skills module to get `activate_skill`). Reads go through one sandbox over the project folder.
 */
export async function loadBmad6Agent(
  options: LoadBundleAgentOptions,
  install: Bmad6Install,
): Promise<BundleAgent> {
  const projectRoot = path.resolve(options.projectRoot ?? install.projectRoot);
  const reader = await Sandbox.create({
    readRoots: [projectRoot, install.projectRoot, install.bmadDir, ...install.skillDirs],
    ...(options.sessionsDir ? { sessionsDirs: [options.sessionsDir] } : {}),
    ...(options.env ? { env: options.env } : {}),
    maxReadBytes: options.maxReadBytes,
    onFileLoad: options.onFileLoad,
  });
  const allConfig = await loadBmad6Config(install, reader);
  const found = await resolveAgentSkill(install, allConfig.agents, options.agent, reader);
  const entry = allConfig.agents.find((a) => a.skill === found.skill);
  const config = entry?.module ? await loadBmad6Config(install, reader, entry.module) : allConfig;
  const agent = await readAgentSkill(install, found, reader);
  const warnings = [...config.warnings, ...agent.warnings];
  const configured = options.outputFolder ?? config.values.output_folder ?? BMAD_DEFAULT_OUTPUT;
  if (configured.startsWith('~')) {
    throw new BundleError('sandbox', `output_folder must not be home-relative: ${configured}`, {
      file: config.source,
      key: 'output_folder',
    });
  }
  const outputFolder = await realPathOf(path.resolve(projectRoot, configured));
  const sandbox = await reader.withWriteRoot(outputFolder);
  const variables: Record<string, string> = {
    ...config.values,
    'project-root': projectRoot,
    'skill-root': agent.dir,
    'skill-name': agent.skill,
    output_folder: outputFolder,
  };
  const scope = { projectRoot, bundleRoot: install.bmadDir, now: options.now, variables };
  const fill = (text: string) => fillVariables(text, scope);
  const facts = await loadPersistentFacts(agent.block.persistentFacts, sandbox, fill, projectRoot, warnings);
  const bundleConfig = { path: config.source, values: config.values };
  const toolsContext: BmadToolsContext = { sandbox, scope, outputFolder, bundleConfig };
  const agentFile = asAgentFile(agent);
  const definition = compileBundleDefinition({
    agent: agentFile,
    systemPrompt: buildBmad6Prompt({
      agent,
      config: config.values,
      configFiles: config.files,
      outputFolder,
      fill,
    }),
    contextMessages: facts.map((content) => ({ role: 'system' as const, content })),
    tools: createBmadTools(toolsContext),
  });
  return {
    definition,
    id: agent.skill,
    file: agent.file,
    name: agent.block.name,
    title: agent.block.title,
    icon: agent.block.icon,
    menu: agentFile.menu,
    greeting: buildBmad6Greeting(agent, config.values.user_name),
    variables,
    sandbox,
    bundleRoot: install.bmadDir,
    projectRoot,
    coreRoot: undefined,
    outputFolder,
    agentFile,
    warnings,
    toolsContext,
    menuChoice: (text) => bmad6MenuChoice(agent.block.menu, text),
  };
}
