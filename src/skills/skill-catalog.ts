import type { Skill } from './skill.js';

// The catalog block of the system prompt: each skill's name and description, nothing more. Bodies
// come in when the model activates a skill; resources when it reads them.

/** The name of the tool that activates a skill. */
export const ACTIVATE_SKILL_TOOL = 'activate_skill';

/** What the model is told when a skill ships scripts. */
export const SCRIPTS_NOTE =
  'agentloop never runs scripts: there is no shell tool. When a skill says to run one of its scripts, ' +
  'do not claim it ran; read it with read_file if its content helps, or show the user the command to run themselves.';

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Options of {@link buildSkillCatalog}. */
export interface SkillCatalogOptions {
  /** Skills left out of the list (a BMAD agent's own skill is its persona, not a catalog entry). */
  exclude?: readonly string[];
}

/**
 * The system-prompt block listing the skills by name and description, with how to use them
 * (`activate_skill`, then `read_file` for what the skill refers to), and the note on scripts when any
 * skill has some. Empty when there is no skill to list.
 */
export function buildSkillCatalog(skills: readonly Skill[], options: SkillCatalogOptions = {}): string {
  const listed = skills.filter((s) => !options.exclude?.includes(s.name));
  if (listed.length === 0) return '';
  const entries = listed.map(
    (s) =>
      `  <skill>\n    <name>${escapeText(s.name)}</name>\n    <description>${escapeText(s.description.replace(/\s+/g, ' '))}</description>\n  </skill>`,
  );
  const lines = [
    'AGENT SKILLS',
    'Skills are folders of instructions for particular tasks. Only their names and descriptions are listed here.',
    `- When a request matches a skill's description, call ${ACTIVATE_SKILL_TOOL}({ name }) before anything else, then follow the instructions it returns.`,
    "- Read the files a skill refers to with read_file: a relative path starts at the active skill's folder ({skill-root}), else at the project folder ({project-root}).",
    '- Save what you produce with save_output, into the output folder.',
  ];
  if (listed.some((s) => s.hasScripts)) lines.push(`- ${SCRIPTS_NOTE}`);
  lines.push('<available_skills>', ...entries, '</available_skills>');
  return lines.join('\n');
}
