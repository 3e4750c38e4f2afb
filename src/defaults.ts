/**
 * Every behaviour-changing default in one place. Options override them per agent.
 */
export const DEFAULTS = {
  /** LLM calls allowed per user turn (the final no-tools answer call comes on top). */
  maxIterations: 50,
  /** Share of `maxIterations` at which the model is told how many calls remain. */
  iterationWarningShare: 0.8,
  /** Iterations added by `extendLimit()` when no count is given. */
  extendIterationsBy: 10,
  /** Per-call tool timeout in ms. */
  toolTimeoutMs: 60_000,
  /** Time the final no-tools answer call gets after a turn deadline has passed, in ms. */
  finalAnswerGraceMs: 30_000,
  /** Identical calls (same tool, same arguments) in a turn before the turn ends; a note comes one earlier. */
  maxRepeatedCalls: 5,
  /** Failing tool calls in a row before the turn ends; a note comes one earlier. */
  maxConsecutiveErrors: 5,
  /** Whether calls whose arguments are complete start before the stream ends. */
  eagerToolStart: true,
  /** Model used when none is given. */
  model: 'gpt-4o-mini',
} as const;
