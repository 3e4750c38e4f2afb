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
  /** Whether calls whose arguments are certainly complete (the next call began, or the stream said it ended with tool calls) start before the stream ends. */
  eagerToolStart: true,
  /** Tool results longer than this many characters are truncated with a note. */
  maxToolResultChars: 100_000,
  /** A model stream (or the wait for its first byte) silent this long is cut and retried, in ms. */
  streamIdleTimeoutMs: 120_000,
  /** Model used when none is given. */
  model: 'gpt-4o-mini',
  /** LLM call attempts in all (1 + retries); the SDK's own retries are off so this policy rules. */
  llmMaxAttempts: 4,
  /** First retry delay before jitter, in ms; doubles each retry. */
  llmRetryBaseDelayMs: 500,
  /** Upper bound of a backoff delay before jitter, in ms. */
  llmRetryMaxDelayMs: 30_000,
  /** Longest wait a server's `retry-after` / `retry-after-ms` header may impose, in ms. */
  llmRetryAfterCapMs: 60_000,
  /** Share of the model's context window above which a `limit_warning` is due. */
  contextWarningShare: 0.8,
  /** Share of the model's context window above which the conversation is compacted by summary. */
  compactAtShare: 0.8,
  /** Time the summary call of a compaction has, in ms; past it, the agent prunes instead. */
  compactionTimeoutMs: 120_000,
  /** Share of `limits.maxCostUsd` (or `maxSessionCostUsd`) at which a `limit_warning` is due. */
  costWarningShare: 0.8,
  /** Tokens held back for the completion: the request is pruned to fit `window - reserve`. */
  completionReserveTokens: 16_384,
  /** The completion reserve never takes more than this share of a (small) context window. */
  completionReserveMaxShare: 0.25,
  /**
   * A saved record holds the conversation itself up to this many messages (so that it reads on its
   * own, and a lost transcript still restores it); above, it refers to the transcript, so that a save
   * costs the same however long the session is (docs/persistence.md, "What a save writes").
   */
  recordMessagesInline: 32,
  /**
   * How long a session's lease lasts unless renewed, in ms (renewed every third of it while the agent
   * holds the session). A crashed owner's sessions go to another worker after this long.
   */
  leaseMs: 5_000,
  /** Time a context provider has to answer before each model call, in ms; a late one is left out and reported. */
  contextProviderTimeoutMs: 2_000,
  /** A context block (the plan, a context provider's) longer than this many characters is cut with a note. */
  contextBlockMaxChars: 20_000,
  /** Restart delay of an MCP server after its first failure, in ms; doubles with each failure in a row. */
  mcpRestartBaseDelayMs: 500,
  /** Longest wait before an MCP server is started again, in ms. */
  mcpRestartMaxDelayMs: 30_000,
  /** Time an MCP server has to start and list its tools, in ms. */
  mcpStartTimeoutMs: 30_000,
  /** Context window assumed for a model not in the table, in tokens. */
  unknownModelContextWindow: 128_000,
} as const;
