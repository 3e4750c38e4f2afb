import { stat } from 'node:fs/promises';
import path from 'node:path';
import { type AgentFile, type MenuItem, parseAgentFile } from './agent-file-parser.js';
import { buildGreeting } from './agent-greeting.js';
import { type BmadToolsContext, createBmadTools } from './bmad-tools.js';
import { BMAD_INSTALL_COMMAND, findBmad6Install, refuseBmadSource } from './bmad6/bmad-install.js';
import { loadBmad6Agent } from './bmad6/bmad6-agent.js';
import { type BundleAgentDefinition, compileBundleDefinition } from './bundle-definition.js';
import { detectTree, listAgentFiles } from './bundle-discovery.js';
import { BundleError } from './bundle-error.js';
import { runCriticalActions } from './critical-actions.js';
import { fillVariables, type VariableScope } from './path-variables.js';
import { type FileLoadListener, realPathOf, Sandbox } from './sandbox/sandbox.js';
import { buildSystemPrompt } from './system-prompt.js';

export interface LoadBundleAgentOptions {
  /** A spec-layout bundle root, a module of an installed tree, or a project folder holding `bmad/`. */
  bundleRoot: string;
  /** The agent's id, name or file stem. */
  agent: string;
  /**
   * `{project-root}`: the folder the agent works in. Defaults to the folder holding `bmad/` when the
   * bundle sits in an installed tree (its agents say `{project-root}/bmad/...`), else the current directory.
   */
  projectRoot?: string;
  /** `{core-root}`; defaults to `bmad/core` of an installed tree or the nearest `core` above the bundle. */
  coreRoot?: string;
  /** Where `save_output` may write; defaults to the config's `output_folder`, else `<projectRoot>/output`. */
  outputFolder?: string;
  /**
   * The session store's folder when it is configured elsewhere (`FileSessionStore`'s `dir`): the tools
   * never read or write it. `<projectRoot>/.agentloop/sessions` and `$AGENTLOOP_HOME/sessions` are
   * refused without it.
   */
  sessionsDir?: string;
  /** Where `AGENTLOOP_HOME` is read (for the sessions folder the sandbox refuses); defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Largest file the tools read (bytes). */
  maxReadBytes?: number;
  /** Called for every file read, with the reason (lazy-loading log). */
  onFileLoad?: FileLoadListener;
  /** Clock for `{date}`. */
  now?: () => Date;
}

/**
 * A loaded bundle agent: the `AgentDefinition` it compiled into, and beside it what UIs need (who it is,
 * its greeting and menu, the sandbox, roots and variables of its session). Run it with
 * `createAgent(toAgentOptions(bundleAgent.definition, {}, runtime))`.
 */
export interface BundleAgent {
  /**
   * The compiled agent: a valid `name` (see `bundleDefinitionName`), the description, the system prompt
   * as `instructions`, the critical actions' `contextMessages` (variables filled) and the `tools`
   * (read_file, execute_workflow, save_output, bound to this agent's sandbox).
   */
  definition: BundleAgentDefinition;
  /** The agent's `id` attribute. */
  id: string;
  /** The agent file's path. */
  file: string;
  /** The persona's name as written, for display (`BMad Master`); `definition.name` is the identifier. */
  name: string;
  title: string;
  icon: string;
  menu: MenuItem[];
  /** Greeting in persona plus the numbered menu, for the CLI to print. */
  greeting: string;
  /** Session variables (config values plus project-root, bundle-root, core-root, output_folder). */
  variables: Record<string, string>;
  sandbox: Sandbox;
  bundleRoot: string;
  projectRoot: string;
  coreRoot: string | undefined;
  outputFolder: string;
  /** The parsed agent file. */
  agentFile: AgentFile;
  /** Non-fatal findings of initialization. */
  warnings: string[];
  /**
   * For a user message that is just a menu code or number, the message to send instead (the choice
   * with the tool call it maps to); undefined for anything else. BMAD 6.12 agents have it.
   */
  menuChoice?: (text: string) => string | undefined;
  /** What the agent's tools resolve paths against (sandbox, variables, config): skills reuse it. */
  toolsContext: BmadToolsContext;
}

function matches(agent: AgentFile, wanted: string): boolean {
  const w = wanted.toLowerCase();
  const stem = (p: string) => path.basename(p).replace(/\.md$/i, '').toLowerCase();
  return (
    agent.id.toLowerCase() === w ||
    agent.name.toLowerCase() === w ||
    stem(agent.id) === w ||
    stem(agent.file) === w
  );
}

async function findAgentFile(
  bundleRoots: string[],
  wanted: string,
  sandbox: Sandbox,
): Promise<{ agent: AgentFile; bundleRoot: string }> {
  const candidates: { file: string; bundleRoot: string }[] = [];
  for (const bundleRoot of bundleRoots) {
    for (const file of await listAgentFiles(bundleRoot)) candidates.push({ file, bundleRoot });
  }
  const stem = wanted.replace(/\.md$/i, '').toLowerCase();
  const byStem = candidates.filter((c) => path.basename(c.file, '.md').toLowerCase() === stem);
  const ordered = [...byStem, ...candidates.filter((c) => !byStem.includes(c))];
  const agents: string[] = [];
  for (const { file, bundleRoot } of ordered) {
    const { content } = await sandbox.readText(
      file,
      byStem.length > 0 && byStem[0]?.file === file ? 'agent' : 'discovery',
    );
    if (!/<agent[\s>]/.test(content)) {
      // The file asked for by name is there but holds no agent: say that, not "unknown agent".
      if (byStem.some((c) => c.file === file)) {
        throw new BundleError(
          'parse',
          `${file} has no <agent> block: an agent file holds its agent in an XML <agent> element`,
          { file, key: wanted },
        );
      }
      continue;
    }
    const agent = parseAgentFile(content, file);
    if (matches(agent, wanted)) return { agent, bundleRoot };
    agents.push(path.basename(file, '.md'));
  }
  throw new BundleError(
    'unknown-agent',
    `Unknown agent "${wanted}" in ${bundleRoots.join(', ')}. Agents: ${agents.sort().join(', ') || '(none)'}`,
    {
      file: bundleRoots[0],
      key: wanted,
    },
  );
}

/** The error for a folder with no agents: a BMAD source tree says to install it; anything else says what was looked for. */
async function refuseEmptyTree(root: string): Promise<never> {
  await refuseBmadSource(root);
  throw new BundleError(
    'unknown-agent',
    `No agents in ${root}: it holds no BMAD install (_bmad/ of BMAD 6, bmad/ of an alpha tree) and no bundle ` +
      `(bundle.yaml or agents/*.md). Install BMAD there (${BMAD_INSTALL_COMMAND}) or name a bundle folder`,
    { file: root },
  );
}

/**
 * Loads one agent of a bundle: parses its file, runs its critical actions (reading only what they
 * name, usually config.yaml) and compiles it into an `AgentDefinition` (system prompt, context
 * messages, tools), returned with its greeting and menu. Workflows, instructions and templates are read
 * later, when a tool call asks.
 */
export async function loadBundleAgent(options: LoadBundleAgentOptions): Promise<BundleAgent> {
  const given = path.resolve(options.bundleRoot);
  if (!(await stat(given).catch(() => undefined))?.isDirectory()) {
    throw new BundleError('not-found', `Bundle folder not found: ${given}`, { file: given });
  }
  const install = await findBmad6Install(given);
  if (install) return loadBmad6Agent(options, install);
  const tree = await detectTree(given);
  if (tree.bundles.length === 0) await refuseEmptyTree(given);
  const isBundle = tree.bundles.some((b) => b.root === given);
  const bundleRoots = isBundle ? [given] : tree.bundles.filter((b) => !b.isCore).map((b) => b.root);
  if (!isBundle) bundleRoots.push(...tree.bundles.filter((b) => b.isCore).map((b) => b.root));
  const projectRoot = path.resolve(
    options.projectRoot ?? (tree.layout === 'installed' ? tree.projectRoot : process.cwd()),
  );
  const coreRoot = options.coreRoot ? path.resolve(options.coreRoot) : tree.coreRoot;
  const readRoots = [given, projectRoot, ...(coreRoot ? [coreRoot] : [])];
  const reader = await Sandbox.create({
    readRoots,
    ...(options.sessionsDir ? { sessionsDirs: [options.sessionsDir] } : {}),
    ...(options.env ? { env: options.env } : {}),
    maxReadBytes: options.maxReadBytes,
    onFileLoad: options.onFileLoad,
  });
  const { agent, bundleRoot } = await findAgentFile(bundleRoots, options.agent, reader);

  const baseScope: VariableScope & { projectRoot: string } = {
    projectRoot,
    bundleRoot,
    coreRoot,
    now: options.now,
  };
  const critical = await runCriticalActions(agent, reader, baseScope);
  const configured = options.outputFolder ?? critical.variables.output_folder;
  if (configured?.startsWith('~')) {
    throw new BundleError('sandbox', `output_folder must not be home-relative: ${configured}`, {
      file: critical.config?.path,
      key: 'output_folder',
    });
  }
  const outputFolder = await realPathOf(path.resolve(projectRoot, configured ?? 'output'));
  const sandbox = await reader.withWriteRoot(outputFolder);
  const variables: Record<string, string> = {
    ...critical.variables,
    'project-root': projectRoot,
    'bundle-root': bundleRoot,
    ...(coreRoot ? { 'core-root': coreRoot } : {}),
    output_folder: outputFolder,
  };
  const scope = { ...baseScope, variables };
  const fill = (text: string) =>
    fillVariables(text, { ...scope, configSource: critical.config?.path, config: critical.config?.values });
  const toolsContext: BmadToolsContext = {
    sandbox,
    scope,
    outputFolder,
    bundleConfig: critical.config,
    knownWorkflows: agent.menu.flatMap((m) =>
      m.targets.filter((t) => t.kind === 'workflow').map((t) => t.target),
    ),
  };
  const tools = createBmadTools(toolsContext);
  const definition = compileBundleDefinition({
    agent,
    systemPrompt: buildSystemPrompt({
      name: agent.name,
      title: agent.title,
      icon: agent.icon,
      persona: agent.persona,
      rules: agent.rules,
      menu: agent.menu,
      prompts: agent.prompts,
      outputFolder,
      fill,
    }),
    contextMessages: critical.messages.map((content) => ({ role: 'system' as const, content })),
    tools,
  });
  return {
    definition,
    id: agent.id,
    file: agent.file,
    name: agent.name,
    title: agent.title,
    icon: agent.icon,
    menu: agent.menu,
    greeting: buildGreeting(agent, variables.user_name),
    variables,
    sandbox,
    bundleRoot,
    projectRoot,
    coreRoot,
    outputFolder,
    agentFile: agent,
    warnings: critical.warnings,
    toolsContext,
  };
}
