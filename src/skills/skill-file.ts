import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  MAX_SKILL_FILE_BYTES,
  type Skill,
  type SkillProblem,
  skillDescriptionProblem,
  skillNameProblem,
  skillProblem,
} from './skill.js';

// Reading one SKILL.md: a bounded read (a 5 MB file is a problem, never a 5 MB string), the
// frontmatter split off and parsed leniently, the name and description checked.

/** The file name every skill folder holds. */
export const SKILL_FILE = 'SKILL.md';

/** A SKILL.md that cannot be used as it is: the problem to report. */
export class SkillFileError extends Error {
  override readonly name = 'SkillFileError';
  constructor(readonly problem: SkillProblem) {
    super(problem.message);
  }
}

/**
 * Reads a UTF-8 file of at most `maxBytes` bytes, never more: a larger file throws a `too-large`
 * problem after reading `maxBytes + 1` bytes at most. The final symlink is not followed.
 */
export async function readBoundedText(file: string, maxBytes = MAX_SKILL_FILE_BYTES): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SkillFileError(skillProblem(file, SKILL_FILE, 'unreadable', `cannot be opened (${code})`));
  }
  try {
    const info = await handle.stat();
    if (!info.isFile())
      throw new SkillFileError(skillProblem(file, SKILL_FILE, 'unreadable', 'is not a regular file'));
    if (info.size > maxBytes) {
      throw new SkillFileError(
        skillProblem(file, SKILL_FILE, 'too-large', `is ${info.size} bytes; the limit is ${maxBytes} bytes`),
      );
    }
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) {
      throw new SkillFileError(
        skillProblem(file, SKILL_FILE, 'too-large', `grew past the limit of ${maxBytes} bytes while read`),
      );
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** SKILL.md split at its frontmatter. */
export interface SkillFileParts {
  /** Every frontmatter key, unknown ones included. */
  frontmatter: Record<string, unknown>;
  /** The instructions: everything after the closing `---`, leading blank lines removed. */
  body: string;
}

const OPENING = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSING = /^(?:---|\.\.\.)[ \t]*$/m;

/**
 * Splits SKILL.md text into its frontmatter (parsed as YAML) and body. Lenient: when the YAML does
 * not parse, top-level `key: value` lines whose value holds a colon (`description: Use when: ...`, a
 * common slip) are read as plain text and the parse is tried again. Throws a `frontmatter` problem.
 */
export function splitSkillFile(text: string, file: string): SkillFileParts {
  const opening = OPENING.exec(text);
  if (!opening) {
    throw new SkillFileError(
      skillProblem(
        file,
        'frontmatter',
        'frontmatter',
        'has no YAML frontmatter (it must start with a --- line)',
      ),
    );
  }
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) {
    throw new SkillFileError(
      skillProblem(file, 'frontmatter', 'frontmatter', 'the frontmatter is not closed (no second --- line)'),
    );
  }
  const yaml = rest.slice(0, closing.index);
  const body = rest.slice(closing.index + closing[0].length).replace(/^(?:[ \t]*\r?\n)+/, '');
  return { frontmatter: parseFrontmatter(yaml, file), body };
}

function parseFrontmatter(yaml: string, file: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = parseYaml(yaml);
  } catch (error) {
    const repaired = quotePlainValues(yaml);
    try {
      data = repaired === yaml ? undefined : parseYaml(repaired);
    } catch {
      data = undefined;
    }
    if (data === undefined) {
      const first = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      throw new SkillFileError(
        skillProblem(file, 'frontmatter', 'frontmatter', `invalid YAML frontmatter: ${first}`),
      );
    }
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new SkillFileError(
      skillProblem(
        file,
        'frontmatter',
        'frontmatter',
        'the frontmatter must be a YAML mapping (key: value lines)',
      ),
    );
  }
  return data as Record<string, unknown>;
}

/** Top-level `key: value` lines whose plain value holds `: ` or ` #`, rewritten as quoted strings. */
function quotePlainValues(yaml: string): string {
  return yaml
    .split('\n')
    .map((line) => {
      const m = /^([A-Za-z0-9_-]+):[ \t]+([^'"|>\s[{].*?)\s*$/.exec(line);
      if (!m || !/: | #/.test(m[2]!)) return line;
      return `${m[1]}: ${JSON.stringify(m[2])}`;
    })
    .join('\n');
}

/** Whether a folder holds at least one entry (a `scripts/` with files in it). */
async function hasEntries(dir: string): Promise<boolean> {
  const info = await lstat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return false;
  return (await readdir(dir).catch(() => [])).length > 0;
}

/** Where a SKILL.md lies: the real folder, the skills folder it was found in. */
export interface SkillLocation {
  /** Real path of the skill's folder. */
  dir: string;
  /** The skills folder it was found in (defaults to the folder's parent). */
  root?: string;
  /** The folder's name as listed (a symlink's own name), for the name rule; defaults to `dir`'s base name. */
  folderName?: string;
  maxBytes?: number;
}

/**
 * Reads and checks one skill's SKILL.md (the frontmatter only is kept). Never throws: a SKILL.md
 * that cannot be used gives no skill and a problem; a name that breaks the rule or a description
 * over the limit still gives the skill, with a problem noted.
 */
export async function parseSkillFile(
  location: SkillLocation,
): Promise<{ skill?: Skill; problems: SkillProblem[] }> {
  const file = path.join(location.dir, SKILL_FILE);
  const folder = location.folderName ?? path.basename(location.dir);
  let parts: SkillFileParts;
  try {
    parts = splitSkillFile(await readBoundedText(file, location.maxBytes), file);
  } catch (error) {
    if (error instanceof SkillFileError) return { problems: [error.problem] };
    throw error;
  }
  const { frontmatter } = parts;
  const problems: SkillProblem[] = [];
  const rawName = frontmatter.name;
  let name = folder;
  if (rawName === undefined || rawName === null) {
    problems.push(
      skillProblem(file, 'name', 'name', `the name is missing; the folder's name "${folder}" is used`, false),
    );
  } else if (typeof rawName !== 'string') {
    problems.push(skillProblem(file, 'name', 'name', `the name must be text, found ${typeof rawName}`));
    return { problems };
  } else {
    name = rawName.trim();
    const wrong = skillNameProblem(name, folder);
    if (wrong && name.length === 0) return { problems: [skillProblem(file, 'name', 'name', wrong)] };
    if (wrong) problems.push(skillProblem(file, 'name', 'name', wrong, false));
  }
  const descriptionProblem = skillDescriptionProblem(frontmatter.description);
  const description = typeof frontmatter.description === 'string' ? frontmatter.description.trim() : '';
  if (descriptionProblem) {
    // Without a description the model cannot know when to use the skill: it is left out.
    const skipped = description.length === 0;
    problems.push(skillProblem(file, 'description', 'description', descriptionProblem, skipped));
    if (skipped) return { problems };
  }
  const skill: Skill = {
    name,
    description,
    dir: location.dir,
    file,
    root: location.root ?? path.dirname(location.dir),
    frontmatter,
    hasScripts: await hasEntries(path.join(location.dir, 'scripts')),
  };
  return { skill, problems };
}

/** A skill's instructions: SKILL.md read again (bounded), the frontmatter removed. Throws a {@link SkillFileError}. */
export async function readSkillBody(skill: Pick<Skill, 'file'>, maxBytes?: number): Promise<string> {
  return splitSkillFile(await readBoundedText(skill.file, maxBytes), skill.file).body;
}
