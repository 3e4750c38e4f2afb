import path from 'node:path';
import { z } from 'zod';
import { BundleError } from '../bundle/bundle-error.js';
import { isInside } from '../bundle/sandbox/sandbox-paths.js';
import { defineTool } from '../tools/define-tool.js';
import { activeSkillNames } from './active-skills.js';
import { ACTIVATE_SKILL_TOOL, SCRIPTS_NOTE } from './skill-catalog.js';
import { splitSkillFile } from './skill-file.js';
import { listSkillResources } from './skill-resources.js';
import { findSkill, type SkillToolsSource } from './skill-tools-context.js';

/** A folder as the model sees it: relative to the project when inside it, else absolute. */
export function shownFolder(projectRoot: string, dir: string): string {
  if (!isInside(projectRoot, dir)) return dir;
  return path.relative(projectRoot, dir).split(path.sep).join('/') || '.';
}

/**
 * The `activate_skill({ name })` tool. Its result (a JSON object starting with `"activated"`, which
 * is how the session remembers the activation: active-skills.ts) holds the skill's instructions
 * (SKILL.md without its frontmatter, read through the sandbox), its folder relative to the project
 * and the list of its resource files. An unknown name is an error listing the names there are.
 */
export function createActivateSkillTool(source: SkillToolsSource) {
  return defineTool({
    name: ACTIVATE_SKILL_TOOL,
    description:
      'Activate an Agent Skill by name: returns its instructions, its folder and the list of its files. ' +
      "Call it when a request matches a skill's description, then follow the instructions. Read the files " +
      'it lists with read_file (paths relative to the skill folder work once it is active).',
    parameters: z.object({
      name: z.string().describe('The skill name, as listed under AGENT SKILLS'),
    }),
    idempotent: true,
    execute: async ({ name }, toolContext) => {
      const ctx = await source;
      const skill = findSkill(ctx.skills, name);
      if (!skill) {
        const names = ctx.skills.map((s) => s.name).join(', ') || '(none)';
        throw new BundleError('not-found', `Unknown skill "${name}". Skills: ${names}`, { key: name });
      }
      const { content } = await ctx.sandbox.readText(skill.file, 'skill');
      const { body } = splitSkillFile(content, skill.file);
      const resources = await listSkillResources(skill);
      const before = activeSkillNames(toolContext.messages).filter((n) => n !== skill.name);
      return {
        activated: skill.name,
        folder: shownFolder(ctx.scope.projectRoot, skill.dir),
        description: skill.description,
        resources: resources.truncated ? [...resources.files, '(more files not listed)'] : resources.files,
        ...(skill.hasScripts ? { scripts: SCRIPTS_NOTE } : {}),
        ...(before.length > 0 ? { also_active: before } : {}),
        paths:
          'Relative paths given to read_file start in this skill folder ({skill-root}) when the file is there, else in the project folder ({project-root}).',
        instructions: body,
      };
    },
  });
}
