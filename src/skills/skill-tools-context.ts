import type { BmadToolsContext } from '../bundle/bmad-tools.js';
import type { Skill } from './skill.js';

/**
 * What the skill tools work with: the BMAD tools' context (the one sandbox, the variables, the
 * output folder, a bundle's config) plus the skills found. `scope.projectRoot` is `{project-root}`.
 */
export interface SkillToolsContext extends BmadToolsContext {
  skills: readonly Skill[];
}

/** The skill of a name: exact, else ignoring case and surrounding spaces. */
export function findSkill(skills: readonly Skill[], name: string): Skill | undefined {
  const wanted = name.trim().toLowerCase();
  return skills.find((s) => s.name === name) ?? skills.find((s) => s.name.toLowerCase() === wanted);
}

/** The context, or a promise of it: tools made before the skills are discovered wait for it on their first call. */
export type SkillToolsSource = SkillToolsContext | Promise<SkillToolsContext>;
