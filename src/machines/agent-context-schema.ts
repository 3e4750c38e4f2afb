import { type ZodType, z } from 'zod';
import type { Message } from '../llm/message.js';
import type { AgentContext } from './agent-context.js';
import { AGENT_STATES } from './agent-states.js';
import type { TerminateReason } from './emitted-events.js';

// What a persisted snapshot must hold for the machine to run from it: the schema of `AgentContext`
// (agent-context.ts) and of the snapshot around it. A restore checks a saved snapshot against it
// (agent-snapshot.ts) so that a file a later version wrote, or one edited by hand, is refused with
// the field named instead of failing somewhere inside XState or a turn.

/** Every `TerminateReason` (eval suites check a case's expected reason against it too). */
export const TERMINATE_REASONS = [
  'completed',
  'question',
  'max_iterations',
  'timeout',
  'interrupted',
  'length',
  'content_filter',
  'token_budget',
  'cost_budget',
  'repeated_calls',
  'consecutive_errors',
  'error',
] as const satisfies readonly TerminateReason[];

/** Fails to compile when `TerminateReason` gains a member the list above lacks. */
export type TerminateReasonsListed = [Exclude<TerminateReason, (typeof TERMINATE_REASONS)[number]>] extends [
  never,
]
  ? true
  : never;

const count = z.number().int().nonnegative();
const usage = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  cachedPromptTokens: z.number().optional(),
  // Absent in sessions saved before prices were known, and for a model without one: unknown.
  costUsd: z.number().optional(),
});
const terminateReason = z.enum(TERMINATE_REASONS);

/** A chat message as far as the machine and the wire rely on it: a known role, call ids where they belong. */
const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.enum(['system', 'developer', 'user', 'function']) }),
  z.looseObject({
    role: z.literal('assistant'),
    tool_calls: z.array(z.looseObject({ id: z.string().min(1), type: z.string() })).optional(),
  }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: z.string() }),
]);

const toolCall = z.looseObject({
  id: z.string(),
  name: z.string(),
  argsText: z.string(),
  needsApproval: z.boolean(),
});

const toolResult = z.looseObject({
  toolCallId: z.string(),
  name: z.string(),
  content: z.string(),
  isError: z.boolean(),
  durationMs: z.number(),
});

const batch = z.object({
  calls: z.array(toolCall),
  results: z.record(z.string(), toolResult),
  pending: z.array(z.string()),
  started: z.array(z.string()),
  runners: z.record(z.string(), z.array(z.string())),
});

/** A saved plan: the shape `update_plan` validated (steps with a known status). */
const plan = z.looseObject({
  explanation: z.string().optional(),
  steps: z.array(
    z.looseObject({ step: z.string(), status: z.enum(['pending', 'in_progress', 'completed']) }),
  ),
});

const limits = z.object({
  maxIterations: z.number(),
  iterationWarningShare: z.number(),
  timeoutMs: z.number().nullable(),
  tokenBudget: z.number().nullable(),
  maxCostUsd: z.number().nullable(),
  maxSessionCostUsd: z.number().nullable(),
  maxRepeatedCalls: z.number(),
  maxConsecutiveErrors: z.number(),
});

/** One entry per context field: a field added to `AgentContext` does not compile until it is here. */
const contextShape: { [K in keyof AgentContext]-?: ZodType } = {
  sessionId: z.string(),
  messages: z.array(message),
  limits,
  turn: count,
  iteration: count,
  maxIterations: z.number(),
  warned: z.boolean(),
  deadline: z.number().nullable(),
  pausedAt: z.number().nullable(),
  batch,
  finalReason: terminateReason.nullable(),
  partial: z.string(),
  response: z.string(),
  terminateReason: terminateReason.nullable(),
  error: z.looseObject({ message: z.string(), code: z.string().optional() }).nullable(),
  turnUsage: usage,
  totalUsage: usage,
  repeatedCalls: z.record(z.string(), z.number()),
  consecutiveErrors: count,
  alwaysAllowed: z.array(z.string()),
  plan: plan.nullable(),
  initialized: z.boolean(),
  lastState: z.enum(AGENT_STATES).nullable(),
  // Checked against the conversation by the restore (compactionProblem), which falls back to pruning.
  compaction: z.looseObject({}).nullable(),
  compactedCall: count.nullable(),
};

/** The machine's context, as a restore requires it (after `upgradeSnapshot`). */
export const agentContextSchema = z.looseObject(contextShape).superRefine((context, ctx) => {
  const problem = conversationProblem(context.messages as Message[], { openEnd: true });
  if (problem) ctx.addIssue({ code: 'custom', path: ['messages', problem.index], message: problem.message });
});

/** A persisted child actor (a tool runner): XState restores it from its snapshot and logic name. */
const persistedChild = z.looseObject({ snapshot: z.looseObject({}), src: z.string() });

/** `actor.getPersistedSnapshot()` as saved, before `upgradeSnapshot`: the parts a restore reads first. */
export const persistedSnapshotEnvelope = z.looseObject({
  // Only a running actor is saved; XState restores 'done', 'error' or 'stopped' as an actor that ignores events.
  status: z.literal('active'),
  value: z.enum(AGENT_STATES),
  context: z.looseObject({}),
  children: z.record(z.string(), persistedChild).optional(),
});

/** Where a conversation breaks what the Chat Completions API accepts about tool calls. */
export interface ConversationProblem {
  /** Index of the message where it shows. */
  index: number;
  message: string;
}

/**
 * The first place where `messages` breaks the tool-call rules the API enforces: every `tool` message
 * answers an unanswered call of the assistant message the tool messages follow, and every call is
 * answered before the next other message. With `openEnd`, the calls of a last assistant message may
 * still be unanswered (a batch in flight, as a snapshot in WaitingApproval holds it).
 */
export function conversationProblem(
  messages: readonly Message[],
  options: { openEnd?: boolean } = {},
): ConversationProblem | undefined {
  let open: Set<string> | undefined;
  let openAt = -1;
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index]!;
    if (m.role === 'tool') {
      if (!open?.delete(m.tool_call_id)) {
        return {
          index,
          message: `a tool message for "${m.tool_call_id}" that answers no unanswered call of the assistant message before it`,
        };
      }
      continue;
    }
    if (open && open.size > 0) {
      return {
        index,
        message: `the calls ${[...open].map((id) => `"${id}"`).join(', ')} of message ${openAt} are not answered before it`,
      };
    }
    open = undefined;
    openAt = -1;
    if (m.role === 'assistant' && m.tool_calls?.length) {
      open = new Set(m.tool_calls.map((c) => c.id));
      openAt = index;
    }
  }
  if (open && open.size > 0 && !options.openEnd) {
    return {
      index: messages.length,
      message: `the calls ${[...open].map((id) => `"${id}"`).join(', ')} of message ${openAt} are not answered`,
    };
  }
  return undefined;
}
