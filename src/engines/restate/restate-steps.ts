import { CancelledError, type ObjectContext } from '@restatedev/restate-sdk';
import type { DurableSteps } from '../../machines/durable-effects.js';

/** How a handler hears what its steps ran into: a cancellation (an interrupt), or Restate itself failing. */
export interface StepOutcomes {
  /** The invocation was cancelled (the `interrupt` handler): the turn is to end Interrupted. */
  cancelled(): void;
  /** The engine failed (a journal mismatch, a lost connection): the attempt must fail and be retried. */
  failed(error: unknown): void;
}

/**
 * The agent's effects as Restate journal steps: each is one `ctx.run` named by its step key. A
 * cancellation of the invocation reaches every awaited step as a `CancelledError`: the step then never
 * settles and the handler interrupts the agent. Any other rejection is Restate's own failure, never
 * the effect's (effects record their failures as data): it fails the attempt, and the replay goes on
 * from the journal.
 */
export function restateSteps(ctx: ObjectContext, outcomes: StepOutcomes): DurableSteps {
  return {
    async step<T>(key: string, run: () => Promise<T>): Promise<T> {
      try {
        return (await ctx.run(key, run)) as T;
      } catch (error) {
        if (error instanceof CancelledError) outcomes.cancelled();
        else outcomes.failed(error);
        return new Promise<T>(() => {});
      }
    },
  };
}
