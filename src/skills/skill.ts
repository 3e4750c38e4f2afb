// What one Agent Skill is once found: a folder holding SKILL.md (YAML frontmatter with `name` and
// `description`, then instructions in Markdown), with optional references/, assets/ and scripts/.
// Only the frontmatter is read when skills are discovered; the body is read when a skill is activated.

/** A skill found on disk. Paths are absolute; `dir` is the folder's real path. */
export interface Skill {
  /** The frontmatter's `name` (the folder's name when the frontmatter has none). */
  name: string;
  /** The frontmatter's `description`: what the skill does and when to use it. */
  description: string;
  /** Real path of the skill's folder. */
  dir: string;
  /** Path of its SKILL.md. */
  file: string;
  /** The skills folder it was found in (a `.agents/skills`, `.claude/skills` or a given folder). */
  root: string;
  /** Every frontmatter key as parsed, unknown ones included (`license`, `metadata`, `allowed-tools`, ...). */
  frontmatter: Record<string, unknown>;
  /** The folder has a non-empty `scripts/`: the model is told agentloop never runs them. */
  hasScripts: boolean;
}

/** Why a skill, or a file or folder that looked like one, is not quite right. None of them is fatal. */
export type SkillProblemKind =
  /** A folder in a skills folder without SKILL.md. */
  | 'no-skill-file'
  /** SKILL.md has no frontmatter, or its YAML does not parse to a mapping. */
  | 'frontmatter'
  /** The name breaks the naming rule or does not match the folder. */
  | 'name'
  /** The description is missing, empty or too long. */
  | 'description'
  /** A second skill with a name already taken: the first one found wins. */
  | 'duplicate'
  /** SKILL.md is larger than the read limit. */
  | 'too-large'
  /** A skill folder (a symlink) whose real path leaves the project and the skills folders. */
  | 'outside-root'
  /** A file or folder that could not be read (permissions, a vanished file, a given folder missing). */
  | 'unreadable'
  /** A link in a skill's body to a file of the skill that does not exist. */
  | 'missing-resource';

/** One problem with a skill: the file, the key and what is wrong. */
export interface SkillProblem {
  /** The file (or folder) it is about. */
  file: string;
  /** The frontmatter key, or what else is concerned (`SKILL.md`, a link target). */
  key: string;
  kind: SkillProblemKind;
  message: string;
  /** Whether the skill was left out (otherwise it loads with the problem noted). */
  skipped: boolean;
}

/** A problem whose message starts with the file it is about. */
export function skillProblem(
  file: string,
  key: string,
  kind: SkillProblemKind,
  message: string,
  skipped = true,
): SkillProblem {
  return { file, key, kind, message: `${file}: ${message}`, skipped };
}

/** What a skill's name may be: lowercase letters, digits and single hyphens, not at either end. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Longest skill name. */
export const MAX_SKILL_NAME_LENGTH = 64;
/** Longest description. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;
/** Largest SKILL.md read (bytes): a larger one is a problem, not a read. */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;

/** What is wrong with a skill name given the folder it sits in, or `undefined` when it is fine. */
export function skillNameProblem(name: string, folder: string): string | undefined {
  if (name.length === 0) return 'the name is empty';
  if (name.length > MAX_SKILL_NAME_LENGTH)
    return `the name is ${name.length} characters long; the limit is ${MAX_SKILL_NAME_LENGTH}`;
  if (!SKILL_NAME_PATTERN.test(name)) {
    return `the name ${JSON.stringify(name)} must be lowercase letters, digits and hyphens (no hyphen at either end, none doubled)`;
  }
  if (name !== folder) return `the name ${JSON.stringify(name)} does not match its folder "${folder}"`;
  return undefined;
}

/** What is wrong with a description, or `undefined` when it is fine. */
export function skillDescriptionProblem(description: unknown): string | undefined {
  if (description === undefined || description === null) return 'the description is missing';
  if (typeof description !== 'string') return `the description must be text, found ${typeof description}`;
  if (description.trim().length === 0) return 'the description is empty';
  if (description.length > MAX_SKILL_DESCRIPTION_LENGTH) {
    return `the description is ${description.length} characters long; the limit is ${MAX_SKILL_DESCRIPTION_LENGTH}`;
  }
  return undefined;
}
