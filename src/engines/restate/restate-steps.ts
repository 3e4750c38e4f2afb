import { CancelledError, type ObjectContext, RestatePromise } from '@restatedev/restate-sdk';
import type { DurableSteps } from '../../machines/durable-effects.js';

/** A step's outcome as data, tagged with the id of its asker. */
type Outcome = { id: number; outcome: { value: unknown } | { error: unknown } };

/** A Restate promise the turn waits for, and what to do with its outcome. */
interface Waiting {
  promise: RestatePromise<unknown>;
  /** A `ctx.run` step of an effect (not an awakeable). */
  step: boolean;
  /** The wait during or before which it was asked: a tool batch's calls are asked in one go, so they share one. */
  round: number;
  settle: (outcome: { value: unknown } | { error: unknown }) => void;
  /**
   * Its outcome as data (`promise.map`), made once and raced in every round it waits in. Dropped
   * after a cancellation: a Restate promise that was awaited keeps its cancellation for good.
   */
  outcome?: RestatePromise<Outcome>;
}

/**
 * The agent's effects as Restate journal steps, and the one place that awaits Restate.
 *
 * Each effect's step is a `ctx.run` named by its step key, issued when the machine asks for it (so the
 * journal's commands come in the machine's order). The SDK lets one await at a time make progress
 * (two awaits waiting at once fail the attempt with "awaitNext already pending"), so steps are never
 * awaited where they are asked for: the turn's loop ({@link RestateStepDriver.next}) waits for all
 * that is outstanding at once and hands each outcome to its asker as it comes. Between two waits the
 * loop lets the machine react (new steps are asked for only in reaction to an outcome), so every wait
 * holds every step then running. A wait is one of three: a lone promise awaited by itself; a tool
 * batch (several steps asked in one go and nothing else) awaited with one `RestatePromise.all`, each
 * call's outcome handed over as it comes, since the machine asks for nothing until the batch ends;
 * anything else raced (`RestatePromise.race`), one outcome a wait, so the machine may ask for a step
 * in reaction that the next wait holds.
 */
export class RestateStepDriver implements DurableSteps {
  readonly #ctx: ObjectContext;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;
  /** Whether something was asked for (or the turn ended) since the last wait began. */
  #asked = false;
  /** Ends the wait of {@link settled} early, when it waits. */
  #kick: (() => void) | undefined;
  /** Counts the waits ({@link next}): what is asked between two of them shares a round. */
  #round = 0;

  constructor(ctx: ObjectContext) {
    this.#ctx = ctx;
  }

  step<T>(key: string, run: () => Promise<T>): Promise<T> {
    return this.#enter(this.#ctx.run(key, run), true);
  }

  /** Waits for a Restate promise (an awakeable) through the loop. */
  wait<T>(promise: RestatePromise<T>): Promise<T> {
    return this.#enter(promise, false);
  }

  #enter<T>(promise: RestatePromise<T>, step: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(this.#next++, {
        promise,
        step,
        round: this.#round,
        settle: (outcome) => ('value' in outcome ? resolve(outcome.value as T) : reject(outcome.error)),
      });
      this.wake();
    });
  }

  /** Tells the loop the machine did something it must look at (asked for a step, ended the turn). */
  wake(): void {
    this.#asked = true;
    this.#kick?.();
  }

  /**
   * Lets the machine react to what was just settled, before the loop looks at it: resolves a microtask
   * after the machine asked for a step or the turn ended ({@link wake}: the machine asks for a
   * batch's steps in one go, so they are all asked by then), or, when it asks for nothing (it came to
   * an approval wait), after every promise reaction and two turns of the event loop ({@link quiesce}).
   * Until 2026-11-29 every round waited the two turns (rsplit36): two wakes of the thread a step, and
   * the step's closure started two turns later.
   */
  settled(): Promise<void> {
    if (this.#asked) {
      this.#asked = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      let handle: ReturnType<typeof setImmediate> | undefined = setImmediate(() => {
        handle = setImmediate(done);
      });
      const done = () => {
        if (handle) clearImmediate(handle);
        handle = undefined;
        this.#kick = undefined;
        this.#asked = false;
        resolve();
      };
      this.#kick = () => queueMicrotask(done);
    });
  }

  /** Whether anything waits for Restate. */
  get idle(): boolean {
    return this.#waiting.size === 0;
  }

  /**
   * Waits for the outstanding promises and settles the askers of those that end: the first to end,
   * or every call of a tool batch. Resolves `'cancelled'` when the invocation was cancelled (the
   * `interrupt` handler), leaving every step not yet settled outstanding.
   */
  async next(): Promise<'settled' | 'cancelled'> {
    // What was asked until now is in this wait: the next round's `settled` waits for what comes after.
    this.#asked = false;
    this.#round++;
    if (this.#isBatch()) return this.#batch();
    let winner: Outcome;
    try {
      winner = await this.#first();
    } catch (error) {
      if (error instanceof CancelledError) return this.#cancelled();
      throw error;
    }
    // A cancellation may come as the failure of the promise that won.
    if (isCancellation(winner)) return this.#cancelled();
    this.#hand(winner);
    return 'settled';
  }

  /**
   * The first outcome of the outstanding promises: a lone one's (a text turn, a chain) awaited without
   * a race, several raced (`RestatePromise.race`: a combinator the SDK's VM walks on every poll).
   */
  #first(): RestatePromise<Outcome> {
    if (this.#waiting.size === 1) {
      const [id, waiting] = this.#waiting.entries().next().value as [number, Waiting];
      return outcomeOf(id, waiting);
    }
    return RestatePromise.race([...this.#waiting].map(([id, waiting]) => outcomeOf(id, waiting)));
  }

  /**
   * Whether what waits is a tool batch: several steps, all asked in one round, nothing else. The
   * machine asks for a batch's calls in one go and for nothing more until they all end (its tool
   * runner returns once every call has), so one wait may hold them to the end. A step of another
   * round (a stopped model call's, beside a compaction's) or an awakeable makes it a race.
   */
  #isBatch(): boolean {
    if (this.#waiting.size < 2) return false;
    let round: number | undefined;
    for (const waiting of this.#waiting.values()) {
      if (!waiting.step || (round !== undefined && waiting.round !== round)) return false;
      round = waiting.round;
    }
    return true;
  }

  /**
   * Awaits a tool batch's steps with one `RestatePromise.all` (one SDK await, where a race a call took
   * five for a batch of five) and hands each call's outcome to its asker as it comes: the SDK maps a
   * step's outcome when its notification is taken, and its VM yields after each mapped step that
   * completes, so the askers are settled one at a time in the journal's order, as the races did,
   * in a replay too (`test/restate-step-driver.test.ts`).
   */
  async #batch(): Promise<'settled' | 'cancelled'> {
    const handed = [...this.#waiting].map(([id, waiting]) =>
      outcomeOf(id, waiting).map((outcome, failure) => {
        // An outcome as data never fails; a failure here is the engine's, for the await to throw.
        if (!outcome) throw failure;
        if (!isCancellation(outcome)) this.#hand(outcome);
        return outcome;
      }),
    );
    let outcomes: Outcome[];
    try {
      outcomes = await RestatePromise.all(handed);
    } catch (error) {
      if (error instanceof CancelledError) return this.#cancelled();
      throw error;
    }
    return outcomes.some(isCancellation) ? this.#cancelled() : 'settled';
  }

  /** Settles the asker of an outcome, once: a step's outcome may come through a batch's `all` and a later race. */
  #hand(outcome: Outcome): void {
    const waiting = this.#waiting.get(outcome.id);
    if (!waiting) return;
    this.#waiting.delete(outcome.id);
    waiting.settle(outcome.outcome);
  }

  #cancelled(): 'cancelled' {
    for (const waiting of this.#waiting.values()) waiting.outcome = undefined;
    return 'cancelled';
  }
}

/** Whether an outcome is the invocation's cancellation (the `interrupt` handler) rather than a step's own. */
function isCancellation(outcome: Outcome): boolean {
  return 'error' in outcome.outcome && outcome.outcome.error instanceof CancelledError;
}

/** The waiting promise's outcome as data, made once per promise (until a cancellation drops it). */
function outcomeOf(id: number, waiting: Waiting): RestatePromise<Outcome> {
  waiting.outcome ??= waiting.promise.map((value, failure) => ({
    id,
    outcome: failure ? { error: failure } : { value },
  }));
  return waiting.outcome;
}

/** Lets the machine react to what was just settled: every promise reaction, then two turns of the event loop. */
export async function quiesce(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
