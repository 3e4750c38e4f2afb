import path from 'node:path';
import { BMAD6_DIR } from '../bundle/bmad-install.js';
import { type BundleAgent, type LoadBundleAgentOptions, loadBundleAgent } from '../bundle/bundle-agent.js';
import { discoverSkills } from '../skills/skill-discovery.js';
import { addSkillsToBundleAgent } from '../skills/skills-agent.js';

/** What `run` and `chat` know about the agent to load. */
export interface ProjectAgentRequest {
  /** `--bundle`: a bundle root or an installed tree; without it the project is looked at. */
  bundle?: string;
  /** `--project`: the project folder (a BMAD 6 install's `_bmad/` or its parent); default: the current directory. */
  project?: string;
  agent: string;
  output?: string;
  sessionsDir?: string;
  /** More skills folders (beside the project's `.agents/skills` and `.claude/skills`). */
  skills?: readonly string[];
}

/** The project folder a `--project` names: the parent of a `_bmad/` given itself. */
export function projectFolder(project: string | undefined): string {
  const abs = path.resolve(project ?? process.cwd());
  return path.basename(abs) === BMAD6_DIR ? path.dirname(abs) : abs;
}

/**
 * Loads the agent `run` and `chat` talk with: from `--bundle` (with `--project` as `{project-root}`),
 * else from the project folder (a BMAD install in it: `_bmad/`, or `bmad/` of an alpha tree). The
 * project's skills are added (the catalog, `activate_skill`, the skill-aware `read_file`), minus the
 * agent's own skill.
 */
export async function loadProjectAgent(request: ProjectAgentRequest): Promise<BundleAgent> {
  const projectRoot = projectFolder(request.project);
  const options: LoadBundleAgentOptions = {
    bundleRoot: request.bundle ?? projectRoot,
    agent: request.agent,
    ...(request.project ? { projectRoot } : {}),
    ...(request.sessionsDir ? { sessionsDir: request.sessionsDir } : {}),
    ...(request.output ? { outputFolder: request.output } : {}),
  };
  const agent = await loadBundleAgent(options);
  const discovery = await discoverSkills({
    projectRoot: agent.projectRoot,
    ...(request.skills?.length ? { dirs: request.skills } : {}),
  });
  return addSkillsToBundleAgent(agent, discovery, { exclude: [agent.id] });
}
