import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from '../bundle/sandbox/sandbox-paths.js';
import { type Skill, type SkillProblem, skillProblem } from './skill.js';
import { parseSkillFile, SKILL_FILE } from './skill-file.js';

// Finding skills: the project's `.agents/skills/` and `.claude/skills/`, then the folders given
// (`--skills`, `createAgent({ skills })`). One level deep: each folder in a skills folder is a skill.

/** The skills folders of a project, in the order they are searched. */
export const PROJECT_SKILL_DIRS = ['.agents/skills', '.claude/skills'] as const;

export interface DiscoverSkillsOptions {
  /** The project folder (default: the current directory). Its `.agents/skills` and `.claude/skills` are searched first. */
  projectRoot?: string;
  /**
   * More skills folders, searched after the project's in the order given; relative ones start at the
   * project folder. A folder that itself holds SKILL.md is one skill.
   */
  dirs?: readonly string[];
  /** Leave the project's own skills folders out (only `dirs` are searched). */
  projectDirs?: boolean;
  /** Largest SKILL.md read (bytes). */
  maxBytes?: number;
}

/** What discovery found: the skills (first of a name wins) and every problem on the way. */
export interface SkillDiscovery {
  skills: Skill[];
  problems: SkillProblem[];
  /** Real paths of the skills folders searched that exist: reads may reach them. */
  roots: string[];
  /** Real path of the project folder. */
  projectRoot: string;
}

async function realOrUndefined(p: string): Promise<string | undefined> {
  return realpath(p).catch(() => undefined);
}

/** A candidate skill folder found in a skills folder: its path as listed and its real path. */
interface Candidate {
  listed: string;
  real: string;
  root: string;
}

/** The folders of one skills folder, symlinks resolved and checked against the allowed roots. */
async function candidatesIn(
  root: string,
  allowed: readonly string[],
  problems: SkillProblem[],
): Promise<Candidate[]> {
  let entries: string[];
  try {
    entries = (await readdir(root)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    problems.push(skillProblem(root, 'skills folder', 'unreadable', `cannot be listed (${code})`));
    return [];
  }
  const found: Candidate[] = [];
  for (const entry of entries) {
    if (entry.startsWith('.')) continue;
    const listed = path.join(root, entry);
    const link = await lstat(listed).catch(() => undefined);
    if (!link) continue;
    if (!link.isDirectory() && !link.isSymbolicLink()) continue;
    const real = await realOrUndefined(listed);
    if (!real) {
      problems.push(skillProblem(listed, entry, 'unreadable', 'is a dangling symlink or cannot be resolved'));
      continue;
    }
    if (!(await stat(real).catch(() => undefined))?.isDirectory()) continue;
    if (!allowed.some((dir) => isInside(dir, real))) {
      problems.push(
        skillProblem(
          listed,
          entry,
          'outside-root',
          `is a symlink to ${real}, outside the project and the skills folders (${allowed.join(', ')}); it is not loaded`,
        ),
      );
      continue;
    }
    found.push({ listed, real, root });
  }
  return found;
}

/**
 * Finds the skills of a project and of the given folders. Never throws: a folder without SKILL.md, a
 * SKILL.md that does not parse or is too large, a second skill with a name already taken, a symlink
 * leading outside the project and the skills folders: each is a problem naming the file and key, and
 * the other skills load. Order: `.agents/skills`, `.claude/skills`, then `dirs` as given; within a
 * folder, by folder name. The first skill of a name wins.
 */
export async function discoverSkills(options: DiscoverSkillsOptions = {}): Promise<SkillDiscovery> {
  const projectGiven = path.resolve(options.projectRoot ?? process.cwd());
  const projectRoot = (await realOrUndefined(projectGiven)) ?? projectGiven;
  const problems: SkillProblem[] = [];
  const searched: { dir: string; given: boolean }[] = [
    ...(options.projectDirs === false
      ? []
      : PROJECT_SKILL_DIRS.map((d) => ({ dir: path.join(projectGiven, d), given: false }))),
    ...(options.dirs ?? []).map((d) => ({ dir: path.resolve(projectGiven, d), given: true })),
  ];
  const roots: string[] = [];
  for (const { dir, given } of searched) {
    const real = await realOrUndefined(dir);
    const isDir = real ? (await stat(real).catch(() => undefined))?.isDirectory() : false;
    if (!real || !isDir) {
      if (given)
        problems.push(
          skillProblem(dir, 'skills folder', 'unreadable', 'is not a folder (given as a skills folder)'),
        );
      continue;
    }
    if (!roots.includes(real)) roots.push(real);
  }
  const allowed = [projectRoot, ...roots];
  const skills: Skill[] = [];
  const byName = new Map<string, Skill>();
  const seenDirs = new Set<string>();
  for (const root of roots) {
    // A given folder that holds SKILL.md itself is one skill, not a folder of skills.
    const single = await lstat(path.join(root, SKILL_FILE)).catch(() => undefined);
    const candidates: Candidate[] = single
      ? [{ listed: root, real: root, root: path.dirname(root) }]
      : await candidatesIn(root, allowed, problems);
    for (const candidate of candidates) {
      if (seenDirs.has(candidate.real)) continue;
      seenDirs.add(candidate.real);
      const skillFile = await lstat(path.join(candidate.real, SKILL_FILE)).catch(() => undefined);
      if (!skillFile) {
        problems.push(
          skillProblem(
            candidate.listed,
            SKILL_FILE,
            'no-skill-file',
            `has no ${SKILL_FILE}, so it is not a skill`,
          ),
        );
        continue;
      }
      const parsed = await parseSkillFile({
        dir: candidate.real,
        root: candidate.root,
        folderName: path.basename(candidate.listed),
        maxBytes: options.maxBytes,
      });
      problems.push(...parsed.problems);
      const skill = parsed.skill;
      if (!skill) continue;
      const first = byName.get(skill.name);
      if (first) {
        problems.push(
          skillProblem(
            skill.file,
            'name',
            'duplicate',
            `the name "${skill.name}" is taken by ${first.file}, found first; this one is not loaded`,
          ),
        );
        continue;
      }
      byName.set(skill.name, skill);
      skills.push(skill);
    }
  }
  return { skills, problems, roots, projectRoot };
}
