import { stat } from 'node:fs/promises';
import path from 'node:path';
import { type AgentFile, parseAgentFile } from './agent-file-parser.js';
import { buildGreeting } from './agent-greeting.js';
import { type BmadToolsContext, createBmadTools } from './bmad-tools.js';
import { BMAD_INSTALL_COMMAND, findBmad6Install, refuseBmadSource } from './bmad6/bmad-install.js';
import { loadBmad6Agent } from './bmad6/bmad6-agent.js';
import type { BundleAgent, LoadBundleAgentOptions } from './bundle-agent-types.js';
import { compileBundleDefinition } from './bundle-definition.js';
import { detectTree, listAgentFiles } from './bundle-discovery.js';
import { BundleError } from './bundle-error.js';
import { runCriticalActions } from './critical-actions.js';
import { fillVariables, type VariableScope } from './path-variables.js';
import { realPathOf, Sandbox } from './sandbox/sandbox.js';
import { buildSystemPrompt } from './system-prompt.js';

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
