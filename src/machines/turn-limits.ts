import { DEFAULTS } from '../defaults.js';
import type { Message, Usage } from '../llm/message.js';
import { copyWith } from '../object-copy.js';
import type { ToolResult } from '../tools/tool-call.js';
import type { AgentContext } from './agent-context.js';
import type { LimitName, TerminateReason } from './emitted-events.js';
import { addUsage, UNREPORTED_USAGE } from './turn-messages.js';

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
  // The copy gains keys: not a spread (src/object-copy.ts).
  const repeatedCalls: Record<string, number> = copyWith(context.repeatedCalls, {});
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
  finalReason: AgentContext['finalReason'] = context.finalReason,
): { message: string; used: number; max: number } | null {
  if (context.warned || finalReason) return null;
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

/** Sums of dollar fractions are not exact (0.02 * 4 < 0.1 * 0.8): a billionth of a dollar short reaches. */
function reaches(used: number, mark: number): boolean {
  return used >= mark - 1e-9;
}

/** A cost budget and what has been spent against it, in USD. */
interface CostSpend {
  scope: 'turn' | 'session';
  used: number;
  max: number;
}

/** The cost budgets a reply's usage is counted against: the turn's and the session's, when set and known. */
function costSpends(context: AgentContext, turnUsage: Usage, totalUsage: Usage): CostSpend[] {
  const spends: CostSpend[] = [];
  const { maxCostUsd, maxSessionCostUsd } = context.limits;
  // `!= null`: a context saved before the cost budgets existed has neither field.
  if (maxCostUsd != null && turnUsage.costUsd !== undefined)
    spends.push({ scope: 'turn', used: turnUsage.costUsd, max: maxCostUsd });
  if (maxSessionCostUsd != null && totalUsage.costUsd !== undefined)
    spends.push({ scope: 'session', used: totalUsage.costUsd, max: maxSessionCostUsd });
  return spends;
}

/** Whether the turn or the session has a cost budget: without one, a reply's usage is only summed. */
function hasCostBudget(context: AgentContext): boolean {
  // `!= null`: a context saved before the cost budgets existed has neither field.
  return context.limits.maxCostUsd != null || context.limits.maxSessionCostUsd != null;
}

/**
 * Whether the usage after a reply reaches a cost budget (the turn's or the session's): the turn then
 * ends after this call. A cost that is unknown reaches none (createAgent refuses a budget without a price).
 */
export function costBudgetReached(context: AgentContext, turnUsage: Usage, totalUsage: Usage): boolean {
  return costSpends(context, turnUsage, totalUsage).some((s) => reaches(s.used, s.max));
}

/**
 * Why a reply ends the turn without its calls running, or `null`: cut off (`length`,
 * `content_filter`), or a reply that would go on (it has calls) reaching the turn's or the session's
 * cost budget. A reply without calls ends the turn anyway, as `completed`.
 */
export function stopReplyReason(
  context: AgentContext,
  output: { finishReason: string; calls: readonly unknown[]; usage: Usage | null },
): TerminateReason | null {
  if (output.finishReason === 'length' || output.finishReason === 'content_filter')
    return output.finishReason;
  if (context.finalReason !== null || output.calls.length === 0 || !hasCostBudget(context)) return null;
  const next = usageAfter(context, output.usage);
  return costBudgetReached(context, next.turnUsage, next.totalUsage) ? 'cost_budget' : null;
}

/** The turn's and the session's usage once a reply's is counted (a reply without usage: cost unknown). */
export function usageAfter(context: AgentContext, usage: Usage | null) {
  return {
    turnUsage: addUsage(context.turnUsage, usage ?? UNREPORTED_USAGE),
    totalUsage: addUsage(context.totalUsage, usage ?? UNREPORTED_USAGE),
  };
}

/**
 * Why a new turn may not start: the session's cost has reached `maxSessionCostUsd` (a model call
 * would spend past it); `null` when it may. The budget is saved with the session.
 */
export function sessionBudgetSpent(context: AgentContext): string | null {
  const spend = costSpends(context, context.turnUsage, context.totalUsage).find((s) => s.scope === 'session');
  if (!spend || !reaches(spend.used, spend.max)) return null;
  return (
    `the session has cost $${spend.used.toFixed(4)} of its $${spend.max} budget (limits.maxSessionCostUsd, ` +
    'saved with the session): no further model call is made; start a new session to go on'
  );
}

/**
 * The `limit_warning` due when a reply takes the turn's or the session's cost past
 * `DEFAULTS.costWarningShare` of its budget (once: only the reply that crosses the share warns), and
 * the turn goes on.
 */
export function costWarnings(
  context: AgentContext,
  turnUsage: Usage,
  totalUsage: Usage,
): { message: string; used: number; max: number }[] {
  if (!hasCostBudget(context)) return [];
  if (costBudgetReached(context, turnUsage, totalUsage)) return [];
  const before = costSpends(context, context.turnUsage, context.totalUsage);
  return costSpends(context, turnUsage, totalUsage)
    .filter((now) => {
      const threshold = now.max * DEFAULTS.costWarningShare;
      const was = before.find((b) => b.scope === now.scope)?.used ?? 0;
      return reaches(now.used, threshold) && !reaches(was, threshold);
    })
    .map(({ scope, used, max }) => ({
      used,
      max,
      message: `This ${scope} has cost $${used.toFixed(4)} of its $${max} budget; it ends after the model call that reaches it.`,
    }));
}
