import { saveOutputTool } from '../bundle/bmad-tools.js';
import type { Tool } from '../tools/define-tool.js';
import { createActivateSkillTool } from './activate-skill-tool.js';
import { createSkillReadFileTool } from './skill-read-file-tool.js';
import type { SkillToolsSource } from './skill-tools-context.js';

/** The tools of an agent with skills: `activate_skill`, `read_file` (skill-aware) and `save_output`. */
export function createSkillTools(source: SkillToolsSource): Tool[] {
  return [createActivateSkillTool(source), createSkillReadFileTool(source), saveOutputTool(source)];
}

/**
 * Another agent's tools (a BMAD agent's read_file, execute_workflow, save_output) with skills added:
 * `activate_skill` joins them and `read_file` becomes the skill-aware one (same parameter; relative
 * paths try the active skill's folder first). The others are kept as they are.
 */
export function withSkillTools(tools: readonly Tool[], source: SkillToolsSource): Tool[] {
  const readFile = createSkillReadFileTool(source);
  const kept = tools.map((t) => (t.name === readFile.name ? readFile : t));
  if (!kept.includes(readFile)) kept.push(readFile);
  const activate = createActivateSkillTool(source);
  return kept.some((t) => t.name === activate.name) ? kept : [activate, ...kept];
}
