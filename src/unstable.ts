// agentloop/unstable: the seams under the public API, for tools and tests that need them. These names
// may change in any minor version; what the main entry exports does not.

export type { CompactionOptions } from './agent/agent-options.js';
export type { CompactResult } from './agent/compact-on-request.js';
export type { AuditFinishRecord, AuditLogOptions, AuditStartRecord } from './events/audit-log.js';
export { AgentEventBus } from './events/event-bus.js';
export { DEFAULT_SECRET_PATTERNS, type RedactorOptions, type StreamRedactor } from './events/redact.js';
export { type ClassifiedError, classifyLlmError, type LlmErrorKind } from './llm/error-classification.js';
export { type ClientOptions, createOpenAIClient } from './llm/openai-client.js';
export { LlmCallError, type RetryOptions, type RetryPolicy, withRetry } from './llm/retry-policy.js';
export { parseXmlToolCalls, toXmlRequestMessages, xmlToolInstructions } from './llm/xml-tool-calls.js';
export type {
  LlmActorOptions,
  LlmCallInput,
  LlmCallOutput,
  PreparedMessages,
} from './machines/actors/call-llm.js';
export {
  type CompactInput,
  CompactionFailedError,
  type CompactOutput,
} from './machines/actors/compact-conversation.js';
export { composeToolHooks } from './machines/actors/compose-tool-hooks.js';
export type { RunToolsInput, ToolRunnerOptions } from './machines/actors/run-tools.js';
export type { InitializeOutput } from './machines/agent-effects.js';
export type { AgentActorEvent } from './machines/agent-events.js';
export {
  checkPersistedSnapshot,
  interruptedSnapshot,
  type PersistedAgentSnapshot,
  type SnapshotCheck,
  upgradeSnapshot,
} from './machines/agent-snapshot.js';
export { isRestState, REST_STATES, type RestState } from './machines/agent-states.js';
export type { EffectIO } from './machines/effect-io.js';
export * as toolBatch from './machines/tool-batch.js';
export { type CompactionRecord, compactedRequest, SUMMARY_HEADING } from './prompt/compaction.js';
export { type ContextGuardOptions, createContextGuard } from './prompt/context-guard.js';
export {
  ContextWindow,
  type ContextWindowOptions,
  type PreparedRequest,
  type PruneReport,
} from './prompt/context-window.js';
export {
  type BilledTokens,
  callCostUsd,
  type ModelPrice,
  type ModelPricing,
  PRICES_TAKEN,
  resolveModelPrice,
} from './prompt/model-prices.js';
export { type ModelWindow, resolveModelWindow } from './prompt/model-windows.js';
export { TokenCounter, tokenCounterFor } from './prompt/token-counter.js';
export { type PersistenceErrorHandler, SessionPersistence } from './session/persistent-session.js';
export type { RecoveredCall, ReplayPlan } from './session/restore-plan.js';
export {
  type ConversationReference,
  type ExpandedSnapshot,
  expandSnapshot,
  isConversationReference,
} from './session/saved-conversation.js';
export {
  appliedInboxSeqs,
  hasInbox,
  type InboxInput,
  type InboxItem,
  type SessionInboxStore,
} from './session/session-inbox.js';
export {
  hasOwnership,
  type LeaseRequest,
  type SessionLease,
  type SessionOwnership,
  type WriteOptions,
} from './session/session-lease.js';
export { createSessionId, type SessionFiles } from './session/session-store.js';
export { type ResumeDecision, resumeDecisions, toolCallLedger } from './session/transcript.js';
export { notRunToolResult, planRestore } from './session/transcript-replay.js';
export { executeToolCall } from './tools/execute-tool-call.js';
export { idempotencyKeyFor } from './tools/idempotency-key.js';
export { planToolCall } from './tools/tool-call.js';
export type { InboxSessionStore, SessionView } from './workers/session-client.js';
