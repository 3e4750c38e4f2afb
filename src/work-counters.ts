/**
 * Counts of the work agentloop's own code does on the model-call path: internal, not exported from
 * the package. They exist for one test (`test/model-call-work.test.ts`), which runs model calls through
 * the real code and fails when a change adds work per call without saying so there. An increment of a
 * field of one module-level object costs about a nanosecond, so they are always on.
 */
export interface WorkCounts {
  /** Canonical JSON texts made (`llm/request-hash.ts`: the request, a conversation item, a tools array). */
  serializations: number;
  /** SHA-256 digests computed (`llm/request-hash.ts`). */
  hashes: number;
  /** Emitted event objects built by the machine (`machines/turn-messages.ts`) or copied by the relay. */
  events: number;
  /** Copies of a conversation's message array (an append in an assign, a request view made of it). */
  messageCopies: number;
  /**
   * Context updates the machine's per-call actions queue (`machines/actions/`: an assign, each a new
   * context and a new snapshot of the machine, the largest per-step cost under many sessions at once).
   */
  contextUpdates: number;
}

/** The running counts (never reset by agentloop itself). */
export const workCounts: WorkCounts = {
  serializations: 0,
  hashes: 0,
  events: 0,
  messageCopies: 0,
  contextUpdates: 0,
};

/** The counts so far, as a copy (take one before and one after the work measured). */
export function workSnapshot(): WorkCounts {
  return { ...workCounts };
}
