// The public API of agentloop: an explicit export list of what embedders use. Kept at 80 names or
// fewer (test/architecture.test.ts). More lives under subpaths: `agentloop/bundle` (the whole BMAD
// loader), `agentloop/inspector` (the local and Stately inspectors), `agentloop/testing` (the scripted
// server) and `agentloop/unstable` (seams that may change between minor versions).

// The agent
export { Agent, type AgentOptions, createAgent, type ExecutionResult } from './agent/agent.js';
export type { AgentInspection, InspectOption } from './agent/agent-inspection.js';
export { toAgentOptions } from './agent/agent-options.js';
export { AgentRegistry } from './agent/agent-registry.js';
export { type SubagentOptions, subagentTool } from './agent/subagent-tool.js';
// BMAD bundles (the whole loader: agentloop/bundle)
export {
  type BundleAgent,
  BundleError,
  type LoadBundleAgentOptions,
  loadBundleAgent,
  type ValidationReport,
  validateTree,
} from './bundle/index.js';
export { DEFAULTS } from './defaults.js';
export { type AuditLog, type AuditRecord, createAuditLog } from './events/audit-log.js';
export { createRedactor, REDACTED, type Redactor } from './events/redact.js';
export type { AgentLimits } from './limits.js';
export type { Message, Usage } from './llm/message.js';
export { callLlmEffect } from './machines/actors/call-llm.js';
export type { ToolRunHooks } from './machines/actors/run-tools.js';
export { runToolsEffect } from './machines/actors/run-tools.js';
export type { AgentContext, AgentMachineInput } from './machines/agent-context.js';
export { type AgentEffects, bindAgentEffects } from './machines/agent-effects.js';
export type { AgentInputEvent, AgentMachineEvent } from './machines/agent-events.js';
// The machine, for embedding
export { type AgentMachine, agentMachine } from './machines/agent-machine.js';
export { AGENT_STATES, type AgentStateName } from './machines/agent-states.js';
// Events
export type {
  AgentEvent,
  AgentEventMap,
  AgentEventType,
  EventMeta,
  TerminateReason,
  ToolCallInfo,
} from './machines/emitted-events.js';
export {
  type AgentDefinition,
  defineAgent,
  escapeInstructions,
  renderInstructions,
} from './prompt/agent-definition.js';
// Sessions
export { FileSessionStore, type FileSessionStoreOptions } from './session/file-store/file-session-store.js';
export { MemorySessionStore } from './session/memory-session-store.js';
export type { SessionOptions } from './session/persistent-session.js';
export type { RestoreReport } from './session/restore-plan.js';
export type {
  SessionListEntry,
  SessionRecord,
  SessionRecordInput,
  SessionStore,
  SessionSummary,
} from './session/session-store.js';
export { SessionStoreError } from './session/session-store-error.js';
export type { TranscriptEntry, TranscriptEntryInput } from './session/transcript.js';
// Tools
export {
  defineTool,
  type NeedsApproval,
  type Tool,
  type ToolContext,
  type ToolSpec,
} from './tools/define-tool.js';
export {
  askQuestionTool,
  converseTool,
  loopControlTools,
  taskCompletionTool,
} from './tools/loop-control-tools.js';
export type { ApprovalPolicy, ToolCallRequest, ToolResult } from './tools/tool-call.js';
export { ToolRegistry } from './tools/tool-registry.js';
// Many workers, one store (docs/scale-out.md); the Postgres store is agentloop/postgres
export { createSessionClient, type SessionClient } from './workers/session-client.js';
export { startWorker, type Worker, type WorkerOptions } from './workers/session-worker.js';
