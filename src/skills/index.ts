// The public API of Agent Skills (subpath `agentloop/skills`): an explicit export list.

export { createActivateSkillTool, shownFolder } from './activate-skill-tool.js';
export { activatedName, activeSkillNames } from './active-skills.js';
export {
  MAX_SKILL_DESCRIPTION_LENGTH,
  MAX_SKILL_FILE_BYTES,
  MAX_SKILL_NAME_LENGTH,
  SKILL_NAME_PATTERN,
  type Skill,
  type SkillProblem,
  type SkillProblemKind,
  skillDescriptionProblem,
  skillNameProblem,
  skillProblem,
} from './skill.js';
export {
  ACTIVATE_SKILL_TOOL,
  buildSkillCatalog,
  SCRIPTS_NOTE,
  type SkillCatalogOptions,
} from './skill-catalog.js';
export {
  type DiscoverSkillsOptions,
  discoverSkills,
  PROJECT_SKILL_DIRS,
  type SkillDiscovery,
} from './skill-discovery.js';
export {
  parseSkillFile,
  readBoundedText,
  readSkillBody,
  SKILL_FILE,
  SkillFileError,
  type SkillFileParts,
  type SkillLocation,
  splitSkillFile,
} from './skill-file.js';
export { activeSkill, createSkillReadFileTool, resolveSkillPath } from './skill-read-file-tool.js';
export {
  listSkillResources,
  MAX_LISTED_RESOURCES,
  missingSkillLinks,
  skillLinks,
} from './skill-resources.js';
export { createSkillTools, withSkillTools } from './skill-tools.js';
export { findSkill, type SkillToolsContext, type SkillToolsSource } from './skill-tools-context.js';
export { type SkillValidation, type ValidatedSkill, validateSkills } from './skill-validation.js';
export {
  addSkillsToBundleAgent,
  type LoadSkillsAgentOptions,
  loadSkillsAgent,
  prepareSkills,
  type SkillSetup,
  type SkillsAgent,
  type SkillsOption,
  skillWarnings,
} from './skills-agent.js';
