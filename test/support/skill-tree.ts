import { mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Real skill folders in temp dirs for the skills tests.

/** A fresh temp folder (real path). */
export async function tempDir(prefix: string): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), prefix)));
}

/** SKILL.md text with the given frontmatter lines and body. */
export function skillText(frontmatter: Record<string, string>, body = 'Do the thing.'): string {
  const lines = Object.entries(frontmatter).map(([k, v]) => `${k}: ${v}`);
  return `---\n${lines.join('\n')}\n---\n\n${body}\n`;
}

/** Writes a skill folder `<root>/<name>/SKILL.md` (plus any other files given, relative to it). */
export async function writeSkill(
  root: string,
  folder: string,
  skillMd: string | undefined,
  files: Record<string, string> = {},
): Promise<string> {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  if (skillMd !== undefined) await writeFile(path.join(dir, 'SKILL.md'), skillMd);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
  return dir;
}
