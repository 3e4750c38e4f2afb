import path from 'node:path';
import { type AgentOptions, toAgentOptions } from '../agent/agent-options.js';
import { BMAD6_DIR } from '../bundle/bmad6/bmad-install.js';
import { loadBundleAgent } from '../bundle/bundle-agent.js';
import type { BundleAgent } from '../bundle/bundle-agent-types.js';
import { createRedactor } from '../events/redact.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import { FileSessionStore } from '../session/file-store/file-session-store.js';
import { resolveSessionsDir } from '../sessions-dir.js';
import { discoverSkills } from '../skills/skill-discovery.js';
import { addSkillsToBundleAgent, loadSkillsAgent } from '../skills/skills-agent.js';
import type { Tool } from '../tools/define-tool.js';
import { bundlePaths } from './chat/chat-tool-lines.js';
import { UsageError } from './cli-args.js';
import type { CommandIo } from './command-io.js';
import { mcpServersFlag } from './flags/mcp-config-flag.js';
import { type CliStore, openCliStore } from './flags/store-flag.js';
import { connectModel, type ModelConnection, modelFlags, modelOptions } from './model/model-connection.js';
import { bundleScenario, type ScriptedModel } from './model/scripted-model.js';
import { terminalSafe } from './terminal/terminal-safe.js';

// What `run` and `chat` talk with: a BMAD agent (`--bundle`, `--agent`), with the project's skills
// listed beside its menu, or without them a plain assistant with the skills.

/** The `parseArgs` option of `--skills <dir>` (repeatable). */
export const SKILLS_FLAG = { skills: { type: 'string', multiple: true } } as const;

export const SKILLS_USAGE = `  --skills <dir>      a folder of Agent Skills (repeatable), searched after the project's
                      .agents/skills and .claude/skills; without --agent, a plain assistant runs with them
`;

/** The agent a CLI command runs, with what the terminal shows of it. */
export interface CliAgent {
  definition: AgentDefinition & { tools: Tool[] };
  /** Display name, title and icon (the persona's, or `assistant`). */
  name: string;
  title: string;
  icon: string;
  /** Printed when a new chat starts. */
  greeting: string;
  /** The bundle and agent id, for the session record; absent for the plain assistant. */
  bundle?: { root: string; agent: string };
  /** The bundle's scripted demo for this agent, if it ships one. */
  scripted?: ScriptedModel;
  /** Problems with skills (file, key, what is wrong): printed, never fatal. */
  warnings: string[];
  /** A BMAD 6.12 agent's reading of a reply that is only a menu code or number (see BundleAgent). */
  menuChoice?: (text: string) => string | undefined;
  /** Fills a BMAD agent's path variables (`{output_folder}`) in what the terminal shows. */
  pathVariables?: (value: string) => string;
}

/** What the chat screen shows of an agent (and how it reads a menu choice). */
export type ChatPersona = Pick<
  CliAgent,
  'name' | 'title' | 'icon' | 'greeting' | 'menuChoice' | 'pathVariables'
>;

/** Where the agent comes from: the flags of `run` and `chat`. */
export interface CliAgentSource {
  bundle?: string | undefined;
  agent?: string | undefined;
  projectRoot?: string | undefined;
  outputFolder?: string | undefined;
  skills?: readonly string[] | undefined;
  sessionsDir?: string | undefined;
}

function fromBundle(agent: BundleAgent, scripted: ScriptedModel | undefined, warnings: string[]): CliAgent {
  return {
    definition: agent.definition,
    name: agent.name,
    title: agent.title,
    icon: agent.icon,
    greeting: agent.greeting,
    bundle: { root: agent.bundleRoot, agent: agent.id },
    ...(scripted ? { scripted } : {}),
    ...(agent.menuChoice ? { menuChoice: agent.menuChoice } : {}),
    pathVariables: bundlePaths(agent),
    warnings,
  };
}

/** The project folder a `--project` names (default: the current directory): the parent of a `_bmad/` given itself. */
export function projectFolder(project: string | undefined): string {
  const abs = path.resolve(project ?? process.cwd());
  return path.basename(abs) === BMAD6_DIR ? path.dirname(abs) : abs;
}

/**
 * Loads the agent of a `run` or `chat`: with `--agent` (and `--bundle`, else the project's install), that BMAD agent with the
 * skills added (catalog, activate_skill, skill-aware read_file); with neither, a plain assistant with
 * the skills. One without the other is a usage error.
 */
export async function loadCliAgent(source: CliAgentSource): Promise<CliAgent> {
  // Relative --skills folders are taken from the current directory, as the shell gave them.
  const dirs = (source.skills ?? []).map((d) => path.resolve(d));
  if (source.bundle || source.agent) {
    if (!source.agent) throw new UsageError('missing --agent <id> (the agent to run)');
    // Without --bundle the agent comes from the project's BMAD install (_bmad/, or bmad/ of an alpha tree).
    const bundleAgent = await loadBundleAgent({
      bundleRoot: source.bundle ?? projectFolder(source.projectRoot),
      agent: source.agent,
      ...(source.projectRoot ? { projectRoot: projectFolder(source.projectRoot) } : {}),
      ...(source.outputFolder ? { outputFolder: source.outputFolder } : {}),
      ...(source.sessionsDir ? { sessionsDir: source.sessionsDir } : {}),
    });
    const discovery = await discoverSkills({ projectRoot: bundleAgent.projectRoot, dirs });
    // A BMAD 6.12 agent is a skill itself: the catalog lists the others.
    const withSkills = await addSkillsToBundleAgent(bundleAgent, discovery, { exclude: [bundleAgent.id] });
    const skillWarnings = withSkills.warnings.slice(bundleAgent.warnings.length);
    return fromBundle(withSkills, await bundleScenario(bundleAgent), skillWarnings);
  }
  const assistant = await loadSkillsAgent({
    dirs,
    ...(source.projectRoot ? { projectRoot: source.projectRoot } : {}),
    ...(source.outputFolder ? { outputFolder: source.outputFolder } : {}),
    ...(source.sessionsDir ? { sessionsDir: source.sessionsDir } : {}),
  });
  const names = assistant.skills.map((s) => s.name);
  return {
    definition: assistant.definition,
    name: 'assistant',
    title: names.length ? `with ${names.length} skill${names.length === 1 ? '' : 's'}` : 'no skills found',
    icon: '',
    greeting: names.length
      ? `Hello. Skills at hand: ${names.join(', ')}. What shall we do?`
      : 'Hello. No Agent Skills were found (.agents/skills, .claude/skills, --skills); what shall we do?',
    warnings: assistant.warnings,
  };
}

/** The `parseArgs` options naming a command's agent: `--bundle`, `--agent`, `--project`, `--output`, `--skills`. */
export const AGENT_FLAG_OPTIONS = {
  bundle: { type: 'string' },
  agent: { type: 'string' },
  project: { type: 'string' },
  output: { type: 'string' },
  ...SKILLS_FLAG,
} as const;

/** The values of AGENT_FLAG_OPTIONS as `parseArgs` returns them. */
export interface AgentFlagValues {
  bundle?: string | undefined;
  agent?: string | undefined;
  project?: string | undefined;
  output?: string | undefined;
  skills?: string[] | undefined;
}

/** A command's agent loaded from its flags, and the redacted stderr line writer that printed its warnings. */
export interface FlagAgent {
  cliAgent: CliAgent;
  /** The project folder `--project` named (its `_bmad/` parent), absent without the flag. */
  projectRoot: string | undefined;
  /** Writes one redacted, terminal-safe line to stderr. */
  say: (text: string) => void;
}

/** Loads the agent a long-running command (serve, worker, ...) carries from its flags and prints the skills' warnings. */
export async function loadFlagAgent(values: AgentFlagValues, io: CommandIo): Promise<FlagAgent> {
  const projectRoot = values.project ? projectFolder(values.project) : undefined;
  const cliAgent = await loadCliAgent({
    bundle: values.bundle,
    agent: values.agent,
    projectRoot,
    outputFolder: values.output,
    skills: values.skills,
  });
  const say = (text: string) => io.stderr(`${terminalSafe(createRedactor().redact(text))}\n`);
  for (const warning of cliAgent.warnings) say(warning);
  return { cliAgent, projectRoot, say };
}

/** The flags a serving command's agent is read from: the agent's, `--mcp-config`, `--store`, the model's. */
export interface ServedAgentValues extends AgentFlagValues {
  'mcp-config'?: string[] | undefined;
  store?: string | undefined;
  schema?: string | undefined;
  'base-url'?: string | undefined;
  model?: string | undefined;
  'api-key'?: string | undefined;
  scenario?: string | undefined;
  api?: string | undefined;
}

/** The agent a serving command carries, with where its sessions are and its model. */
export interface ServedFlagAgent extends FlagAgent {
  /** The `createAgent` options of every session it serves (the bundle and its agent in `sessionInfo`). */
  options: AgentOptions;
  /** `--store`, or the sessions folder. */
  store: CliStore;
  connection: ModelConnection;
  /** Closes the model connection, then the store. */
  close(): Promise<void>;
}

/**
 * Loads what `serve` and `mcp serve` carry: the agent from its flags (refused without `--agent`,
 * `--skills` or an MCP server, from `--mcp-config` or the project's `.mcp.json`), the store
 * (`--store`, else the sessions folder), the model connection, and the agent's `createAgent` options
 * with `extra` (an approval policy) and the MCP servers.
 */
export async function loadServedAgent(
  values: ServedAgentValues,
  io: CommandIo,
  extra: Partial<AgentOptions> = {},
): Promise<ServedFlagAgent> {
  const mcp = await mcpServersFlag(values['mcp-config'], projectFolder(values.project));
  const hasMcp = Object.keys(mcp.servers).length > 0;
  if (!values.agent && !values.skills?.length && !hasMcp) {
    throw new UsageError(
      'missing --agent <id> (with --bundle or --project), --skills <dir> or --mcp-config <file>',
    );
  }
  const flagAgent = await loadFlagAgent(values, io);
  const { cliAgent } = flagAgent;
  const store: CliStore = values.store
    ? await openCliStore(values)
    : {
        store: new FileSessionStore({ dir: resolveSessionsDir() }),
        description: 'the sessions folder',
        close: async () => {},
      };
  let connection: ModelConnection;
  try {
    connection = await connectModel(modelFlags(values), cliAgent.scripted);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  const options = toAgentOptions(
    cliAgent.definition,
    {},
    {
      name: cliAgent.name,
      ...modelOptions(connection),
      ...extra,
      ...(hasMcp ? { mcpServers: mcp.servers } : {}),
      sessionInfo: cliAgent.bundle
        ? { bundle: cliAgent.bundle.root, meta: { agent: cliAgent.bundle.agent } }
        : {},
    },
  );
  return {
    ...flagAgent,
    options,
    store,
    connection,
    close: async () => {
      await connection.close().catch(() => {});
      await store.close().catch(() => {});
    },
  };
}
