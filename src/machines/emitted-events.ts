import type { Usage } from '../llm/message.js';
import type { ModelCallRecord } from '../llm/model-reply.js';
import type { ToolProgress } from '../tools/define-tool.js';
import type { Plan } from '../tools/update-plan-tool.js';
import type { AgentStateName } from './agent-states.js';

/** Fields every event on the bus carries. */
export interface EventMeta {
  sessionId: string;
  /** The user turn, counted from 1. */
  turn: number;
  /** The LLM call within the turn, counted from 1 (0 before the first call). */
  iteration: number;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** Why a turn ended. */
export type TerminateReason =
  | 'completed'
  | 'question'
  | 'max_iterations'
  | 'timeout'
  | 'interrupted'
  | 'length'
  | 'content_filter'
  | 'token_budget'
  | 'cost_budget'
  | 'repeated_calls'
  | 'consecutive_errors'
  | 'error';

/**
 * The limits a `limit_warning` names: the iteration count, the turn's deadline, identical repeated
 * calls, a failing streak, the model's context window (the conversation nears its size), and the
 * turn's or session's cost in USD (`maxCostUsd`, `maxSessionCostUsd`).
 */
export type LimitName =
  | 'max_iterations'
  | 'timeout'
  | 'repeated_calls'
  | 'consecutive_errors'
  | 'context_window'
  | 'cost_budget';

/** A tool call as the model made it, with parsed arguments when they parse. */
export interface ToolCallInfo {
  toolCallId: string;
  name: string;
  /** Parsed arguments, or the raw string when it is not valid JSON. */
  args: unknown;
}

/**
 * What a running tool reported (`ctx.progress(...)`), with the call it came from: live feedback for
 * UIs, not part of the conversation (the model never sees it, the transcript does not keep it).
 */
export interface ToolProgressInfo extends ToolProgress {
  toolCallId: string;
  /** The tool's name. */
  name: string;
}

/** The events the machine emits and the bus relays, keyed by type. */
export interface AgentEventMap {
  state_change: { state: AgentStateName; previous: AgentStateName | null };
  turn_start: { input: string };
  iteration: { maxIterations: number };
  thinking: { content: string };
  content_chunk: { delta: string };
  tool_call_start: ToolCallInfo;
  tool_call_end: ToolCallInfo & { result?: string; error?: string; durationMs: number };
  /** A running tool reported progress (`ctx.progress`); only between its `tool_call_start` and `tool_call_end`. */
  tool_progress: ToolProgressInfo;
  approval_requested: { pending: ToolCallInfo[] };
  approval_resolved: { toolCallId: string; approved: boolean; reason?: string };
  limit_warning: { limit: LimitName; message: string; used: number; max: number };
  usage: { usage: Usage; turnUsage: Usage; totalUsage: Usage };
  /**
   * A model reply was accepted: how its call went (the wire, the request's hash, the attempt answered,
   * the response's id and model, timings), its finish reason and usage. A saved session writes it to
   * its transcript as a `model_call` event, just before the reply's message.
   */
  model_call: ModelCallRecord & { finishReason: string; usage: Usage | null };
  turn_end: { terminateReason: TerminateReason; response: string; iterations: number };
  error: { message: string; code?: string };
  /**
   * A model call failed and will be tried again after `delayMs` (the SDK's own retries are off; this
   * is the one retry policy). `attempt` is the attempt that failed, counted from 1.
   */
  retry: {
    attempt: number;
    maxAttempts: number;
    delayMs: number;
    kind: string;
    status?: number;
    message: string;
  };
  /** The stream was discarded (a retry follows): UIs drop the partial text they showed. */
  stream_reset: { reason: string; attempt: number };
  /** The agent changed its plan (a successful `update_plan` call): the whole plan as it now stands. */
  plan_updated: { plan: Plan };
  /** Context pruning replaced old tool results. */
  context_pruned: {
    removedTokens: number;
    prunedMessages: number;
    tokensBefore: number;
    tokensAfter: number;
  };
  /**
   * The older conversation was replaced by a summary in the requests from now on (the transcript keeps
   * every message). `entriesCovered`: the messages the summary stands for.
   */
  context_compacted: { tokensBefore: number; tokensAfter: number; entriesCovered: number; model: string };
}

export type AgentEventType = keyof AgentEventMap;

/** One event as delivered to listeners: its payload plus `type` and the common fields. */
export type AgentEvent<K extends AgentEventType = AgentEventType> = {
  [T in K]: { type: T } & EventMeta & AgentEventMap[T];
}[K];
