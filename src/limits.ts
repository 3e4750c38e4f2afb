import { DEFAULTS } from './defaults.js';

/** The limits that end a turn. All live in context, so they survive persistence. */
export interface AgentLimits {
  /** LLM calls per user turn before the final no-tools call (default 50). */
  maxIterations: number;
  /** Share of `maxIterations` at which the model is told how many remain (default 0.8). */
  iterationWarningShare: number;
  /** Wall-clock budget of a turn in ms, excluding time spent waiting for approval; `null` for none. */
  timeoutMs: number | null;
  /** Total tokens (as the API reports them) a turn may use; `null` for none. */
  tokenBudget: number | null;
  /**
   * USD a turn may cost (`null` for none): the turn ends with `cost_budget` after the model call that
   * reached it. Turn and session are two flat fields, like every other limit: each is a number or
   * `null` in the saved context, and a turn budget is the one most agents want (`tokenBudget` is per
   * turn too). Needs the model's price (`pricing`); `createAgent` refuses it for a model without one.
   */
  maxCostUsd: number | null;
  /** USD the whole session may cost, across turns and restores (`null` for none); as `maxCostUsd`. */
  maxSessionCostUsd: number | null;
  /** Identical calls (same tool and arguments) in one turn before it ends. */
  maxRepeatedCalls: number;
  /** Failing tool calls in a row before the turn ends. */
  maxConsecutiveErrors: number;
}

/** Fills in limit defaults. */
export function resolveLimits(limits: Partial<AgentLimits> = {}): AgentLimits {
  return {
    maxIterations: limits.maxIterations ?? DEFAULTS.maxIterations,
    iterationWarningShare: limits.iterationWarningShare ?? DEFAULTS.iterationWarningShare,
    timeoutMs: limits.timeoutMs ?? null,
    tokenBudget: limits.tokenBudget ?? null,
    maxCostUsd: limits.maxCostUsd ?? null,
    maxSessionCostUsd: limits.maxSessionCostUsd ?? null,
    maxRepeatedCalls: limits.maxRepeatedCalls ?? DEFAULTS.maxRepeatedCalls,
    maxConsecutiveErrors: limits.maxConsecutiveErrors ?? DEFAULTS.maxConsecutiveErrors,
  };
}
