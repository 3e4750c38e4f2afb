import type { Message } from '../llm/message.js';
import type { ToolResult } from '../tools/tool-call.js';
import type { AgentContext } from './agent-context.js';
import type { LimitName, TerminateReason } from './emitted-events.js';

/** What the limit checks decided after a batch of tool results. */
export interface LimitVerdict {
  /** Set when a limit ends the turn: the next LLM call is the final one, tools disabled. */
  finalReason: TerminateReason | null;
  /** System notes for the model (a limit is near). */
  notes: { limit: LimitName; message: string; used: number; max: number }[];
  repeatedCalls: Record<string, number>;
  consecutiveErrors: number;
}

/**
 * Pure check run after every tool batch: identical repeated calls, failing streaks, token budget,
 * deadline and iteration count. The first limit passed decides the reason.
 */
export function checkLimitsAfterTools(context: AgentContext, results: ToolResult[]): LimitVerdict {
  const { limits } = context;
  const notes: LimitVerdict['notes'] = [];
  const repeatedCalls = { ...context.repeatedCalls };
  let worstRepeat = 0;
  let worstName = '';
  for (const call of context.batch.calls) {
    const key = `${call.name} ${call.argsText}`;
    const count = (repeatedCalls[key] ?? 0) + 1;
    repeatedCalls[key] = count;
    if (count > worstRepeat) {
      worstRepeat = count;
      worstName = call.name;
    }
  }
  let consecutiveErrors = context.consecutiveErrors;
  for (const result of results) consecutiveErrors = result.isError ? consecutiveErrors + 1 : 0;

  let finalReason: TerminateReason | null = null;
  if (results.some((r) => r.deadlineExceeded)) finalReason = 'timeout';
  else if (worstRepeat >= limits.maxRepeatedCalls) finalReason = 'repeated_calls';
  else if (consecutiveErrors >= limits.maxConsecutiveErrors) finalReason = 'consecutive_errors';
  else if (limits.tokenBudget !== null && context.turnUsage.totalTokens >= limits.tokenBudget)
    finalReason = 'token_budget';
  else if (context.iteration >= context.maxIterations) finalReason = 'max_iterations';

  if (!finalReason) {
    if (worstRepeat === limits.maxRepeatedCalls - 1) {
      notes.push({
        limit: 'repeated_calls',
        used: worstRepeat,
        max: limits.maxRepeatedCalls,
        message: `You have made the same ${worstName} call with the same arguments ${worstRepeat} times. Its result will not change: use it, or try a different approach. One more identical call ends the turn.`,
      });
    }
    if (consecutiveErrors === limits.maxConsecutiveErrors - 1) {
      notes.push({
        limit: 'consecutive_errors',
        used: consecutiveErrors,
        max: limits.maxConsecutiveErrors,
        message: `The last ${consecutiveErrors} tool calls failed. Read the errors and change your approach; one more failure ends the turn.`,
      });
    }
  }
  return { finalReason, notes, repeatedCalls, consecutiveErrors };
}

/** The iteration warning to give before an LLM call, once per turn, when the limit is near. */
export function iterationWarning(
  context: AgentContext,
): { message: string; used: number; max: number } | null {
  if (context.warned || context.finalReason) return null;
  const threshold = Math.ceil(context.maxIterations * context.limits.iterationWarningShare);
  const used = context.iteration; // calls made before this one
  if (used < threshold || used >= context.maxIterations) return null;
  const remaining = context.maxIterations - used;
  return {
    used,
    max: context.maxIterations,
    message: `Note: ${used} of ${context.maxIterations} model calls for this request are used; ${remaining} remain. Finish the most important work and give your answer before they run out.`,
  };
}

/** The message sent with the final no-tools call, telling the model why it must answer now. */
export function finalCallNote(reason: TerminateReason): Message {
  const why: Partial<Record<TerminateReason, string>> = {
    max_iterations: 'the limit of model calls for this request has been reached',
    timeout: 'the time limit for this request has been reached',
    token_budget: 'the token budget for this request has been used up',
    repeated_calls: 'the same tool call was repeated too many times',
    consecutive_errors: 'too many tool calls failed in a row',
  };
  return {
    role: 'system',
    content: `Tools are now disabled because ${why[reason] ?? reason}. Write your answer to the user with what you have: say what was done, what is left, and why you stopped.`,
  };
}
