import { CancelledError, type ObjectContext, RestatePromise } from '@restatedev/restate-sdk';
import type { DurableSteps } from '../../machines/durable-effects.js';

/** A Restate promise the turn waits for, and what to do with its outcome. */
interface Waiting {
  promise: RestatePromise<unknown>;
  settle: (outcome: { value: unknown } | { error: unknown }) => void;
}

/**
 * The agent's effects as Restate journal steps, and the one place that awaits Restate.
 *
 * Each effect's step is a `ctx.run` named by its step key, issued when the machine asks for it (so the
 * journal's commands come in the machine's order). The SDK lets one await at a time make progress
 * (two awaits waiting at once fail the attempt with "awaitNext already pending"), so steps are never
 * awaited where they are asked for: the turn's loop ({@link RestateStepDriver.next}) waits for all
 * that is outstanding at once, with `RestatePromise.race`, and hands the first outcome to its asker.
 * Between two waits the loop lets the machine react (new steps are asked for only in reaction to an
 * outcome), so every wait holds every step then running.
 */
export class RestateStepDriver implements DurableSteps {
  readonly #ctx: ObjectContext;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;

  constructor(ctx: ObjectContext) {
    this.#ctx = ctx;
  }

  step<T>(key: string, run: () => Promise<T>): Promise<T> {
    return this.wait(this.#ctx.run(key, run)) as Promise<T>;
  }

  /** Waits for a Restate promise (an awakeable) through the loop. */
  wait<T>(promise: RestatePromise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(this.#next++, {
        promise,
        settle: (outcome) => ('value' in outcome ? resolve(outcome.value as T) : reject(outcome.error)),
      });
    });
  }

  /** Whether anything waits for Restate. */
  get idle(): boolean {
    return this.#waiting.size === 0;
  }

  /**
   * Waits for the first of the outstanding promises and settles its asker. Resolves `'cancelled'`
   * when the invocation was cancelled (the `interrupt` handler), leaving every step outstanding.
   */
  async next(): Promise<'settled' | 'cancelled'> {
    const entries = [...this.#waiting];
    const race = RestatePromise.race(
      entries.map(([id, w]) =>
        w.promise.map((value, failure) => ({ id, outcome: failure ? { error: failure } : { value } })),
      ),
    );
    let winner: { id: number; outcome: { value: unknown } | { error: unknown } };
    try {
      winner = await race;
    } catch (error) {
      if (error instanceof CancelledError) return 'cancelled';
      throw error;
    }
    // A cancellation may come as the failure of the promise that won.
    if ('error' in winner.outcome && winner.outcome.error instanceof CancelledError) return 'cancelled';
    const waiting = this.#waiting.get(winner.id);
    this.#waiting.delete(winner.id);
    waiting?.settle(winner.outcome);
    return 'settled';
  }
}

/** Lets the machine react to what was just settled: every promise reaction, then two turns of the event loop. */
export async function quiesce(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
