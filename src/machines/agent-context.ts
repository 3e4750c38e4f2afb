import { type AgentLimits, resolveLimits } from '../limits.js';
import type { Message, Usage } from '../llm/message.js';
import type { CompactionRecord } from '../prompt/compaction.js';
import type { Plan } from '../tools/update-plan-tool.js';
import type { AgentStateName } from './agent-states.js';
import type { TerminateReason } from './emitted-events.js';
import { EMPTY_BATCH, type ToolBatch } from './tool-batch.js';

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
  /** When the wait for approval began (the deadline clock stops while the user decides). */
  pausedAt: number | null;
  /** The tool calls of the last assistant message and where each stands (tool-batch.ts). */
  batch: ToolBatch;
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
  /** Tools the user allowed for the rest of the session (`approve(id, { always: true })`). */
  alwaysAllowed: string[];
  /** The agent's plan (`update_plan`), shown to the model before every call; `null` before the first. */
  plan: Plan | null;
  /** Initialization finished: a later Error is recoverable by a new message. */
  initialized: boolean;
  /** The last top-level state entered (for `state_change` events). */
  lastState: AgentStateName | null;
  /** The summary requests send in place of the older conversation (`null`: none, the whole conversation). */
  compaction: CompactionRecord | null;
  /**
   * The model call (iteration) of this turn the conversation was compacted for, or a compaction failed
   * for: at most one a turn (within a turn there is nothing new to summarize: the last user message
   * and what follows stay verbatim), so a failing summary call is not retried before every call.
   */
  compactedCall: number | null;
}

/** Nothing used yet: no tokens, and nothing spent (`costUsd: 0`, known). */
export const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0 };

/** The context a new machine starts with. */
export function initialContext(input: AgentMachineInput): AgentContext {
  const limits = resolveLimits(input.limits);
  return {
    sessionId: input.sessionId ?? crypto.randomUUID(),
    messages: input.messages ?? [],
    limits,
    ...turnFields(limits, 0, null),
    totalUsage: ZERO_USAGE,
    alwaysAllowed: [],
    plan: null,
    initialized: false,
    // A new machine starts in Initializing: its context is made as it enters it, so entering it is
    // no update of its own (and no `state_change`: the agent is in Initializing from `createAgent` on).
    lastState: 'Initializing',
    compaction: null,
  };
}

/** The deadline of a turn (or of its continuation) that starts at `at`. */
export function deadlineFrom(context: AgentContext, at: number): number | null {
  return context.limits.timeoutMs === null ? null : at + context.limits.timeoutMs;
}

/**
 * The fields a new user turn starts with: counters, limits and the answer reset, no batch. Used by the
 * machine when a message arrives and by a restore that replays messages the snapshot did not hold.
 */
export function newTurnFields(context: AgentContext, turn: number, at: number) {
  return turnFields(context.limits, turn, deadlineFrom(context, at));
}

/** The per-turn fields for turn `turn` (0 before the first) with its deadline. */
function turnFields(limits: AgentLimits, turn: number, deadline: number | null) {
  return {
    turn,
    iteration: 0,
    maxIterations: limits.maxIterations,
    warned: false,
    deadline,
    pausedAt: null,
    batch: EMPTY_BATCH,
    finalReason: null,
    partial: '',
    response: '',
    terminateReason: null,
    error: null,
    turnUsage: ZERO_USAGE,
    repeatedCalls: {},
    consecutiveErrors: 0,
    compactedCall: null,
  } satisfies Partial<AgentContext>;
}

/** The fields of a turn that has ended: no batch, no stream in flight, no clock paused. */
export function endedTurnFields(terminateReason: TerminateReason) {
  return {
    batch: EMPTY_BATCH,
    partial: '',
    pausedAt: null,
    finalReason: null,
    terminateReason,
    compactedCall: null,
  } satisfies Partial<AgentContext>;
}
