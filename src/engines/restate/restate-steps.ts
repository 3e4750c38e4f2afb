import { CancelledError, type ObjectContext, RestatePromise } from '@restatedev/restate-sdk';
import type { DurableSteps } from '../../machines/durable-effects.js';

/** How a Restate promise ended: its value, or what it failed with. */
type Outcome = { value: unknown } | { error: unknown };

/** A Restate promise the turn waits for, and what to do with its outcome. */
interface Waiting {
  promise: RestatePromise<unknown>;
  settle: (outcome: Outcome) => void;
}

/**
 * The agent's effects as Restate journal steps, and the one place that awaits Restate.
 *
 * Each effect's step is a `ctx.run` named by its step key, issued when the machine asks for it (so the
 * journal's commands come in the machine's order). The SDK lets one await at a time make progress
 * (two awaits waiting at once fail the attempt with "awaitNext already pending"), so steps are never
 * awaited where they are asked for: the turn's loop ({@link RestateStepDriver.next}) waits for all
 * that is outstanding at once and hands the outcomes that came to their askers, in the order the
 * steps were asked for. Between two waits the loop lets the machine react (new steps are asked for
 * only in reaction to an outcome), so every wait holds every step then running.
 */
export class RestateStepDriver implements DurableSteps {
  readonly #ctx: ObjectContext;
  readonly #waiting = new Map<number, Waiting>();
  /** Outcomes Restate delivered for steps still waiting, not yet handed to their askers. */
  readonly #arrived = new Map<number, Outcome>();
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
   * Waits until at least one outstanding promise has ended, then settles the askers of every one that
   * has, in the order they were asked for (a batch's calls that end together are settled in one
   * round, not one round each). One outstanding promise is awaited as it is; several through one
   * `RestatePromise.race`, each mapped to note its outcome when it comes (so the others that came
   * with the winner are known without awaiting them). Resolves `'cancelled'` when the invocation was
   * cancelled (the `interrupt` handler), leaving the cancelled steps outstanding.
   */
  async next(): Promise<'settled' | 'cancelled'> {
    if (!this.#anyArrived()) {
      const mapped = [...this.#waiting].map(([id, w]) =>
        w.promise.map((value, failure): Outcome => {
          const outcome = failure ? { error: failure } : { value };
          if (this.#waiting.has(id)) this.#arrived.set(id, outcome);
          return outcome;
        }),
      );
      try {
        await (mapped.length === 1 ? mapped[0] : RestatePromise.race(mapped));
      } catch (error) {
        if (error instanceof CancelledError) return 'cancelled';
        throw error;
      }
    }
    // A cancellation may come as the failure of a promise that ended: that step stays outstanding.
    let cancelled = false;
    for (const [id, outcome] of this.#arrived) {
      if ('error' in outcome && outcome.error instanceof CancelledError) {
        this.#arrived.delete(id);
        cancelled = true;
      }
    }
    if (cancelled) return 'cancelled';
    for (const [id, waiting] of this.#waiting) {
      const outcome = this.#arrived.get(id);
      if (!outcome) continue;
      this.#arrived.delete(id);
      this.#waiting.delete(id);
      waiting.settle(outcome);
    }
    return 'settled';
  }

  /** Whether an outcome came for a step still waiting (outcomes of settled steps are dropped). */
  #anyArrived(): boolean {
    for (const id of this.#arrived.keys()) {
      if (this.#waiting.has(id)) return true;
      this.#arrived.delete(id);
    }
    return false;
  }
}

/** Lets the machine react to what was just settled: every promise reaction, then two turns of the event loop. */
export async function quiesce(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
