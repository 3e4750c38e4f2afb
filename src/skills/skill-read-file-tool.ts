import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import { resolveToolPath } from '../bundle/bmad-tools.js';
import { BundleError } from '../bundle/bundle-error.js';
import { isInside } from '../bundle/sandbox/sandbox-paths.js';
import { defineTool } from '../tools/define-tool.js';
import { activeSkillNames } from './active-skills.js';
import type { Skill } from './skill.js';
import { findSkill, type SkillToolsContext, type SkillToolsSource } from './skill-tools-context.js';

const SKILL_VARIABLE = /\{skill-(?:root|name)\}/;

/** The active skill of a conversation: the one activated last that is still known. */
export function activeSkill(
  ctx: SkillToolsContext,
  messages: Parameters<typeof activeSkillNames>[0],
): Skill | undefined {
  const names = activeSkillNames(messages);
  for (let i = names.length - 1; i >= 0; i--) {
    const skill = findSkill(ctx.skills, names[i]!);
    if (skill) return skill;
  }
  return undefined;
}

/**
 * Where a `read_file` path leads, before the sandbox checks it: `{skill-root}`, `{skill-name}`,
 * `{project-root}` and the other variables substituted; a relative path taken from the active
 * skill's folder when the file is there, else from the project folder.
 */
export async function resolveSkillPath(
  input: string,
  ctx: SkillToolsContext,
  skill: Skill | undefined,
): Promise<string> {
  if (!skill && SKILL_VARIABLE.test(input)) {
    const names = ctx.skills.map((s) => s.name);
    const available = names.length > 0 ? `skills available: ${names.join(', ')}` : 'no skills were found';
    throw new BundleError(
      'unresolved-variable',
      `read_file: ${input} uses ${SKILL_VARIABLE.exec(input)![0]} but no skill is active; call activate_skill first (${available})`,
      { file: input, key: 'file_path' },
    );
  }
  const withSkill: SkillToolsContext = skill
    ? {
        ...ctx,
        scope: {
          ...ctx.scope,
          variables: { ...ctx.scope.variables, 'skill-root': skill.dir, 'skill-name': skill.name },
        },
      }
    : ctx;
  const fromProject = resolveToolPath(input, withSkill, ctx.scope.projectRoot, 'file_path');
  if (!skill) return fromProject;
  const fromSkill = resolveToolPath(input, withSkill, skill.dir, 'file_path');
  if (fromSkill === fromProject) return fromProject;
  const status = await ctx.sandbox.status(fromSkill);
  if (status === 'exists') return fromSkill;
  // A file in the skill's folder that the sandbox refuses (a symlink leading out) is still the file
  // meant: the refusal is the answer, not the project's file of the same name.
  const inSkill = isInside(skill.dir, fromSkill) && (await lstat(fromSkill).catch(() => undefined));
  return status === 'outside-root' && inSkill ? fromSkill : fromProject;
}

/**
 * `read_file({ file_path })` aware of skills: the same parameter and sandbox as the BMAD tool, with
 * relative paths resolved from the active skill's folder first (see {@link resolveSkillPath}).
 */
export function createSkillReadFileTool(source: SkillToolsSource) {
  return defineTool({
    name: 'read_file',
    description:
      "Read a file and return its content. A relative path starts in the active skill's folder when the file " +
      'is there, else in the project folder. Paths may use {skill-root}, {skill-name}, {project-root}, ' +
      '{output_folder} and the other config variables. Reads stay inside the project, the skills folders ' +
      'and the BMAD install.',
    parameters: z.object({
      file_path: z
        .string()
        .describe('Path to the file, e.g. references/guide.md or {project-root}/README.md'),
    }),
    idempotent: true,
    execute: async ({ file_path }, toolContext) => {
      const ctx = await source;
      const skill = activeSkill(ctx, toolContext.messages);
      const target = await resolveSkillPath(file_path, ctx, skill);
      const { path: real, content, bytes } = await ctx.sandbox.readText(target, 'read_file');
      return { path: real, bytes, content };
    },
  });
}
