import path from 'node:path';
import type { BundleAgent } from '../bundle/bundle-agent.js';
import { loadBundleAgent } from '../bundle/bundle-agent.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import { discoverSkills } from '../skills/skill-discovery.js';
import { addSkillsToBundleAgent, loadSkillsAgent } from '../skills/skills-agent.js';
import type { Tool } from '../tools/define-tool.js';
import { UsageError } from './cli-args.js';
import { bundleScenario, type ScriptedModel } from './scripted-model.js';

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
}

/** What the chat screen shows of an agent. */
export type ChatPersona = Pick<CliAgent, 'name' | 'title' | 'icon' | 'greeting'>;

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
    warnings,
  };
}

/**
 * Loads the agent of a `run` or `chat`: with `--bundle` and `--agent`, that BMAD agent with the
 * skills added (catalog, activate_skill, skill-aware read_file); with neither, a plain assistant with
 * the skills. One without the other is a usage error.
 */
export async function loadCliAgent(source: CliAgentSource): Promise<CliAgent> {
  // Relative --skills folders are taken from the current directory, as the shell gave them.
  const dirs = (source.skills ?? []).map((d) => path.resolve(d));
  if (source.bundle || source.agent) {
    if (!source.bundle) throw new UsageError('missing --bundle <root> (the bundle folder)');
    if (!source.agent) throw new UsageError('missing --agent <id> (the agent to run)');
    const bundleAgent = await loadBundleAgent({
      bundleRoot: source.bundle,
      agent: source.agent,
      ...(source.projectRoot ? { projectRoot: source.projectRoot } : {}),
      ...(source.outputFolder ? { outputFolder: source.outputFolder } : {}),
      ...(source.sessionsDir ? { sessionsDir: source.sessionsDir } : {}),
    });
    const discovery = await discoverSkills({ projectRoot: bundleAgent.projectRoot, dirs });
    const withSkills = await addSkillsToBundleAgent(bundleAgent, discovery);
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
