import path from 'node:path';
import type { SkillProblem } from './skill.js';
import { type DiscoverSkillsOptions, discoverSkills } from './skill-discovery.js';
import { readSkillBody, SkillFileError } from './skill-file.js';
import { listSkillResources, missingSkillLinks } from './skill-resources.js';

// What `agentloop validate` reports about skills: each skill with its resources, the links in its
// body that lead nowhere, and every problem discovery found.

/** One skill as `validate` reports it. Paths are relative to the project folder when inside it. */
export interface ValidatedSkill {
  name: string;
  description: string;
  /** The skill's folder. */
  folder: string;
  /** Its SKILL.md. */
  file: string;
  /** Files of the skill besides SKILL.md. */
  resources: number;
  hasScripts: boolean;
  /** Links in the body to files of the skill that do not exist. */
  missingLinks: string[];
  /** Frontmatter keys beyond name and description (kept, not checked). */
  otherKeys: string[];
}

/** The skills part of a validation report. */
export interface SkillValidation {
  skills: ValidatedSkill[];
  problems: SkillProblem[];
}

function relative(root: string, p: string): string {
  const rel = path.relative(root, p);
  return rel.startsWith('..') || path.isAbsolute(rel) ? p : rel.split(path.sep).join('/') || '.';
}

/**
 * Discovers the skills of a project (and of `dirs`) and checks each: its body is read (bounded) and
 * every link to a file of the skill is looked up. Never throws; a missing link is a problem naming the
 * SKILL.md and the link.
 */
export async function validateSkills(options: DiscoverSkillsOptions = {}): Promise<SkillValidation> {
  const found = await discoverSkills(options);
  const problems = [...found.problems];
  const root = found.projectRoot;
  const skills: ValidatedSkill[] = [];
  for (const skill of found.skills) {
    let missing: string[] = [];
    try {
      missing = await missingSkillLinks(skill, await readSkillBody(skill, options.maxBytes));
    } catch (error) {
      if (!(error instanceof SkillFileError)) throw error;
      problems.push(error.problem);
    }
    for (const link of missing) {
      problems.push({
        file: skill.file,
        key: link,
        kind: 'missing-resource',
        message: `${skill.file}: links to ${link}, which is not in the skill's folder ${skill.dir}`,
        skipped: false,
      });
    }
    skills.push({
      name: skill.name,
      description: skill.description,
      folder: relative(root, skill.dir),
      file: relative(root, skill.file),
      resources: (await listSkillResources(skill)).files.length,
      hasScripts: skill.hasScripts,
      missingLinks: missing,
      otherKeys: Object.keys(skill.frontmatter).filter((k) => k !== 'name' && k !== 'description'),
    });
  }
  return { skills, problems };
}
