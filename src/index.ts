// The public API of agentloop: an explicit export list.

export {
  Agent,
  type AgentOptions,
  createAgent,
  type ExecutionResult,
} from './agent/agent.js';
export type { AgentInspection, InspectOption } from './agent/agent-inspection.js';
export { toAgentOptions } from './agent/agent-options.js';
export { AgentRegistry } from './agent/agent-registry.js';
export { type SubagentOptions, subagentTool } from './agent/subagent-tool.js';
export { type BmadToolsContext, createBmadTools } from './bundle/bmad-tools.js';
export * from './bundle/index.js';
export { buildSystemPrompt, type SystemPromptInput } from './bundle/system-prompt.js';
export { DEFAULTS } from './defaults.js';
export {
  type AuditFinishRecord,
  type AuditLog,
  type AuditLogOptions,
  type AuditRecord,
  type AuditStartRecord,
  createAuditLog,
} from './events/audit-log.js';
export { AgentEventBus } from './events/event-bus.js';
export {
  createRedactor,
  DEFAULT_SECRET_PATTERNS,
  REDACTED,
  type Redactor,
  type RedactorOptions,
  type StreamRedactor,
} from './events/redact.js';
export {
  type InspectorServer,
  type InspectorServerOptions,
  type SavedSessionView,
  startInspectorServer,
} from './inspector/inspector-server.js';
export { machineChart } from './inspector/machine-graph.js';
export { createSanitizer, type SanitizeOptions, type Sanitizer } from './inspector/sanitize.js';
export { loadSavedSessions, savedSessionView } from './inspector/saved-sessions.js';
export { type StatelyBridge, startStatelyBridge } from './inspector/stately-bridge.js';
export {
  type StatelyInspectOptions,
  statelyInspection,
  statelyInspectorOptions,
} from './inspector/stately-inspector.js';
export type { AgentLimits } from './limits.js';
export { type ClassifiedError, classifyLlmError, type LlmErrorKind } from './llm/error-classification.js';
export type { Message, Usage } from './llm/message.js';
export { type ClientOptions, createOpenAIClient } from './llm/openai-client.js';
export { LlmCallError, type RetryOptions, type RetryPolicy, withRetry } from './llm/retry-policy.js';
export { parseXmlToolCalls, toXmlRequestMessages, xmlToolInstructions } from './llm/xml-tool-calls.js';
export type { PreparedMessages } from './machines/actors/call-llm.js';
export {
  callLlmCreator,
  DeadlineExceededError,
  type LlmActorOptions,
  type LlmCallInput,
  type LlmCallOutput,
} from './machines/actors/call-llm.js';
export { composeToolHooks } from './machines/actors/compose-tool-hooks.js';
export {
  type RunToolsInput,
  runToolsEffect,
  type ToolRunHooks,
  type ToolRunnerOptions,
} from './machines/actors/run-tools.js';
export type { AgentContext, AgentMachineInput } from './machines/agent-context.js';
export {
  type AgentEffects,
  bindAgentEffects,
  type EffectIO,
  type InitializeOutput,
} from './machines/agent-effects.js';
export type { AgentActorEvent, AgentInputEvent, AgentMachineEvent } from './machines/agent-events.js';
export {
  type AgentActorRef,
  type AgentMachine,
  agentMachine,
} from './machines/agent-machine.js';
export { AGENT_STATES, type AgentStateName, REST_STATES, type RestState } from './machines/agent-states.js';
export type {
  AgentEvent,
  AgentEventMap,
  AgentEventType,
  EventMeta,
  TerminateReason,
  ToolCallInfo,
} from './machines/emitted-events.js';
export {
  AGENT_NAME_PATTERN,
  type AgentDefinition,
  defineAgent,
  escapeInstructions,
  renderInstructions,
} from './prompt/agent-definition.js';
export { type ContextGuardOptions, createContextGuard } from './prompt/context-guard.js';
export {
  ContextWindow,
  type ContextWindowOptions,
  type PreparedRequest,
  type PruneReport,
} from './prompt/context-window.js';
export { type ModelWindow, resolveModelWindow } from './prompt/model-windows.js';
export { TokenCounter, tokenCounterFor } from './prompt/token-counter.js';
export { FileSessionStore, type FileSessionStoreOptions } from './session/file-session-store.js';
export { MemorySessionStore } from './session/memory-session-store.js';
export {
  type PersistenceErrorHandler,
  type SessionOptions,
  SessionPersistence,
} from './session/persistent-session.js';
export {
  createSessionId,
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  SessionStoreError,
  type SessionSummary,
} from './session/session-store.js';
export {
  type ResumeDecision,
  resumeDecisions,
  type TranscriptEntry,
  type TranscriptEntryInput,
  toolCallLedger,
} from './session/transcript.js';
export {
  notRunToolResult,
  type PersistedAgentSnapshot,
  planRestore,
  type RecoveredCall,
  type ReplayPlan,
  type RestoreReport,
} from './session/transcript-replay.js';
export {
  defineTool,
  type NeedsApproval,
  type Tool,
  type ToolContext,
  type ToolSpec,
} from './tools/define-tool.js';
export { executeToolCall } from './tools/execute-tool-call.js';
export {
  askQuestionTool,
  converseTool,
  loopControlTools,
  taskCompletionTool,
} from './tools/loop-control-tools.js';
export {
  type ApprovalPolicy,
  planToolCall,
  type ToolCallRequest,
  type ToolResult,
} from './tools/tool-call.js';
export { ToolRegistry } from './tools/tool-registry.js';
