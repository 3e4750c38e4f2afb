import { type AgentLimits, resolveLimits } from '../limits.js';
import type { Message, Usage } from '../llm/message.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { TerminateReason } from './emitted-events.js';

/** What the machine is started with. */
export interface AgentMachineInput {
  sessionId?: string;
  /** Initial conversation: usually the system prompt (and critical-action context). */
  messages?: Message[];
  limits?: Partial<AgentLimits>;
}

/** The machine's context: everything a turn needs, as plain JSON. */
export interface AgentContext {
  sessionId: string;
  /** The conversation, append-only. */
  messages: Message[];
  limits: AgentLimits;
  /** The user turn, counted from 1. */
  turn: number;
  /** LLM calls made in this turn. */
  iteration: number;
  /** `limits.maxIterations` plus any extensions granted in this turn. */
  maxIterations: number;
  /** Whether the model was told this turn that the iteration limit is near. */
  warned: boolean;
  /** Epoch ms at which the turn's time is up; `null` for no deadline. */
  deadline: number | null;
  /** When WaitingApproval was entered (the deadline clock stops there). */
  pausedAt: number | null;
  /** The calls of the last assistant message. */
  calls: ToolCallRequest[];
  /** Results of `calls` received so far, by `tool_call_id`. */
  results: Record<string, ToolResult>;
  /** Ids of calls waiting for the user's approval. */
  pending: string[];
  /** Ids of calls handed to a tool runner. */
  started: string[];
  /** Ids of running tool-runner actors. */
  runners: string[];
  /** When set, the next LLM call has tools disabled and ends the turn with this reason. */
  finalReason: TerminateReason | null;
  /** Text streamed so far by the current LLM call. */
  partial: string;
  /** The turn's answer. */
  response: string;
  terminateReason: TerminateReason | null;
  error: { message: string; code?: string } | null;
  turnUsage: Usage;
  totalUsage: Usage;
  /** Identical-call counts this turn, by `name + arguments`. */
  repeatedCalls: Record<string, number>;
  consecutiveErrors: number;
  /** Initialization finished: a later Error is recoverable by a new message. */
  initialized: boolean;
  /** The last top-level state entered (for `state_change` events). */
  lastState: string | null;
}

export const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** The context a new machine starts with. */
export function initialContext(input: AgentMachineInput): AgentContext {
  const limits = resolveLimits(input.limits);
  return {
    sessionId: input.sessionId ?? crypto.randomUUID(),
    messages: input.messages ?? [],
    limits,
    turn: 0,
    iteration: 0,
    maxIterations: limits.maxIterations,
    warned: false,
    deadline: null,
    pausedAt: null,
    calls: [],
    results: {},
    pending: [],
    started: [],
    runners: [],
    finalReason: null,
    partial: '',
    response: '',
    terminateReason: null,
    error: null,
    turnUsage: ZERO_USAGE,
    totalUsage: ZERO_USAGE,
    repeatedCalls: {},
    consecutiveErrors: 0,
    initialized: false,
    lastState: null,
  };
}
