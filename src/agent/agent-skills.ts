import type { SessionStore } from '../session/session-store.js';
import { ACTIVATE_SKILL_TOOL } from '../skills/skill-catalog.js';
import type { SkillDiscovery } from '../skills/skill-discovery.js';
import { createSkillTools } from '../skills/skill-tools.js';
import { prepareSkills, type SkillSetup, type SkillsOption } from '../skills/skills-agent.js';
import type { Tool } from '../tools/define-tool.js';

export type { SkillsOption } from '../skills/skills-agent.js';

/** The skills of an agent: its tools now, the catalog once discovery is done. */
export interface AgentSkills {
  /** `activate_skill`, plus `read_file` and `save_output` unless the agent has its own. */
  tools: Tool[];
  setup: Promise<SkillSetup>;
  /** What discovery found, once `setup` resolved. */
  discovery?: SkillDiscovery;
}

/**
 * The skills of `createAgent({ skills })`. The tools are made at once (the registry and the context
 * guard count them from the start) and wait for discovery on their first call; the agent waits for
 * it before its first turn to put the catalog in its system prompt. Tools the agent already has keep
 * their name (a BMAD agent's read_file: use `addSkillsToBundleAgent` for a skill-aware one there).
 */
export function agentSkills(
  option: SkillsOption,
  existing: readonly Tool[],
  store?: SessionStore,
): AgentSkills {
  // A file store kept elsewhere than the project's .agentloop/sessions is refused to the tools too.
  const sessionsDir = (store as { dir?: unknown } | undefined)?.dir;
  const given = Array.isArray(option)
    ? { dirs: option as readonly string[] }
    : (option as Exclude<SkillsOption, readonly string[]>);
  const setup = prepareSkills({
    ...(given.dirs ? { dirs: given.dirs } : {}),
    ...(given.projectRoot ? { projectRoot: given.projectRoot } : {}),
    ...(given.outputFolder ? { outputFolder: given.outputFolder } : {}),
    ...(given.discovery ? { discovery: given.discovery } : {}),
    ...(typeof sessionsDir === 'string' ? { sessionsDir } : {}),
  });
  const context = setup.then((s) => s.context);
  // A failure surfaces where the agent awaits `setup` before it starts, not as an unhandled rejection.
  context.catch(() => {});
  const taken = new Set(existing.map((t) => t.name));
  const tools = createSkillTools(context).filter((t) => t.name === ACTIVATE_SKILL_TOOL || !taken.has(t.name));
  const skills: AgentSkills = { tools, setup };
  setup.then(
    (s) => {
      skills.discovery = s.discovery;
    },
    () => {},
  );
  return skills;
}
