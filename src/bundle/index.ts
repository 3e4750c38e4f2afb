// The public API of the BMAD bundle loader: an explicit export list (re-exported from src/index.ts).

export {
  type AgentDialect,
  type AgentFile,
  type AgentPersona,
  type MenuItem,
  type MenuKind,
  type MenuTarget,
  parseAgentFile,
} from './agent-file-parser.js';
export { buildGreeting } from './agent-greeting.js';
export { loadBundleAgent } from './bundle-agent.js';
export type { BundleAgent, LoadBundleAgentOptions } from './bundle-agent-types.js';
export {
  type BundleAgentDefinition,
  type BundleDefinitionInput,
  bundleDefinitionName,
  type CriticalActionMessage,
  compileBundleDefinition,
} from './bundle-definition.js';
export {
  type BundleInfo,
  type BundleLayout,
  type BundleTree,
  type DiscoveredAgent,
  detectTree,
  discoverAgents,
} from './bundle-discovery.js';
export { BundleError, type BundleErrorCode } from './bundle-error.js';
export { type CriticalActionsResult, runCriticalActions } from './critical-actions.js';
export { resolveVariables, substituteVariables, type VariableScope } from './path-variables.js';
export {
  DEFAULT_MAX_READ_BYTES,
  type FileLoadEvent,
  type FileLoadListener,
  type FileLoadReason,
  Sandbox,
  type SandboxOptions,
} from './sandbox/sandbox.js';
export type { ReferenceStatus } from './validation/reference-status.js';
export { validateTree } from './validation/validate-tree.js';
export type {
  ValidatedAgent,
  ValidatedMenuItem,
  ValidatedWorkflow,
  ValidationProblem,
  ValidationReport,
} from './validation/validation-report.js';
export {
  type InstructionNode,
  type InstructionStep,
  type ParsedInstructions,
  parseInstructions,
} from './workflow/instructions-parser.js';
export { loadWorkflow } from './workflow/workflow-loader.js';
export type { LoadedWorkflow, WorkflowContext } from './workflow/workflow-types.js';
