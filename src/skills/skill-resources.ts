import { type Dirent, lstat } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Skill } from './skill.js';
import { SKILL_FILE } from './skill-file.js';

// A skill's files besides SKILL.md (references/, assets/, scripts/, anything else), and the links
// in its body that name files of the skill, for `validate` to check.

/** Most files listed for one skill; past it the list ends with a note. */
export const MAX_LISTED_RESOURCES = 200;
const MAX_DEPTH = 6;

/**
 * The files of a skill's folder other than SKILL.md, as paths relative to the folder (forward
 * slashes), sorted. Hidden entries are skipped and symlinks are listed, not followed (a read of one
 * goes through the sandbox). At most {@link MAX_LISTED_RESOURCES}; `truncated` says when there were more.
 */
export async function listSkillResources(
  skill: Pick<Skill, 'dir'>,
): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  let truncated = false;
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      const rel = path.relative(skill.dir, full).split(path.sep).join('/');
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) await walk(full, depth + 1);
        continue;
      }
      if (rel === SKILL_FILE) continue;
      if (files.length >= MAX_LISTED_RESOURCES) {
        truncated = true;
        return;
      }
      files.push(rel);
    }
  };
  await walk(skill.dir, 0);
  return { files, truncated };
}

/** Markdown links: inline `[text](target)` and reference definitions `[id]: target`. */
const MARKDOWN_LINK = /\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const LINK_DEFINITION = /^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?/gm;
/** Fenced code blocks (``` or ~~~, to the closing fence or the end) and inline code spans. */
const CODE_FENCE = /^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[`~]*[ \t]*$|(?![\s\S]))/gm;
const CODE_SPAN = /(?<!`)(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g;

/**
 * The relative file paths a skill's body links to (URLs, anchors and absolute paths left out),
 * deduplicated. Only markdown links count: a path in a code span or a fenced block is example text
 * (BMAD's agents write "Bare paths (e.g. `references/guide.md`) resolve from the skill root").
 */
export function skillLinks(markdown: string): string[] {
  const body = markdown.replace(CODE_FENCE, '').replace(CODE_SPAN, '');
  const found = new Set<string>();
  const add = (raw: string) => {
    const target = raw.split('#')[0]!.split('?')[0]!;
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/') || target.includes('{'))
      return;
    let decoded = target;
    try {
      decoded = decodeURIComponent(target);
    } catch {
      // Kept as written.
    }
    found.add(decoded.replace(/^\.\//, ''));
  };
  for (const m of body.matchAll(MARKDOWN_LINK)) add(m[1]!);
  for (const m of body.matchAll(LINK_DEFINITION)) add(m[1]!);
  return [...found];
}

/** The links of a skill's body whose file does not exist in the skill's folder. */
export async function missingSkillLinks(skill: Pick<Skill, 'dir'>, body: string): Promise<string[]> {
  const missing: string[] = [];
  for (const link of skillLinks(body)) {
    const exists = await new Promise<boolean>((resolve) =>
      lstat(path.resolve(skill.dir, link), (error) => resolve(!error)),
    );
    if (!exists) missing.push(link);
  }
  return missing;
}
