import { AsyncResource } from 'node:async_hooks';
import { DBOS } from '@dbos-inc/dbos-sdk';
import type { DurableSteps } from '../../machines/durable-effects.js';

/**
 * What a turn's effect step records in DBOS: the effect's own record (`value`), and `interrupt` when
 * an interrupt reached the turn while the step ran; or `skipped` when an interrupt was asked before
 * the step started, which then did not run.
 */
type StepOutcome<T> = { value: T; interrupt?: string } | { skipped: string };

/**
 * A turn's effects as DBOS steps named by their step keys, with interrupts that reach a turn while
 * its steps run (docs/engines.md, "Interrupts").
 *
 * Counted: DBOS numbers a workflow's steps in the order they are called, so the turn's own steps (the
 * copy to the store, the view) are called only when no effect step runs ({@link settled}), in every
 * attempt at the same place.
 *
 * Interrupts: one heard while an effect runs ({@link hear}) interrupts the agent at once (its request
 * or tools are aborted) and is recorded in the outcome of every step then running; one heard while no
 * effect runs is held, and the next effect step records it as `skipped` instead of running. A replay
 * that meets such a record interrupts the agent at that same step, so it takes the path the attempt
 * that recorded it took, whenever it hears of the interrupt itself. (At an approval wait the turn is
 * told by a DBOS message instead, which `DBOS.recv` records.)
 */
export class DbosTurnSteps implements DurableSteps {
  #running = 0;
  readonly #waiters = new Set<() => void>();
  /** Effect steps running in this attempt (not those answered from their records). */
  readonly #live = new Set<{ interrupt?: string }>();
  #held: string | undefined;
  #interrupt: (reason: string) => void = () => {};

  /** Interrupts the agent (set once the agent exists). */
  attach(interrupt: (reason: string) => void): void {
    this.#interrupt = interrupt;
  }

  /**
   * Takes an interrupt asked of the turn; bound to the workflow's async context, so the agent reacts
   * in the workflow wherever it is called from (a timer of the watch).
   */
  readonly hear = AsyncResource.bind((reason: string): void => {
    if (this.#held !== undefined) return;
    this.#held = reason;
    if (this.#live.size === 0) return;
    for (const entry of this.#live) entry.interrupt = reason;
    this.#interrupt(reason);
  });

  async step<T>(key: string, run: () => Promise<T>): Promise<T> {
    this.#running++;
    let outcome: StepOutcome<T>;
    /** What this attempt's run of the step recorded: read back as is, not parsed from its record. */
    let ran: StepOutcome<T> | undefined;
    try {
      const recorded = await DBOS.runStep(
        async (): Promise<string> => {
          if (this.#held !== undefined) {
            ran = { skipped: this.#held };
            return JSON.stringify(ran);
          }
          const entry: { interrupt?: string } = {};
          this.#live.add(entry);
          try {
            const value = await run();
            ran = entry.interrupt !== undefined ? { value, interrupt: entry.interrupt } : { value };
            return JSON.stringify(ran);
          } finally {
            this.#live.delete(entry);
          }
        },
        { name: key },
      );
      // The step ran here: its outcome is the one just recorded, the objects the effect made (as the
      // agent in process gets them); a replay parses the record, which holds the same JSON data.
      outcome = ran ?? fromRecord<T>(recorded);
    } finally {
      this.#running--;
      if (this.#running === 0) for (const wake of this.#waiters) wake();
    }
    if ('skipped' in outcome) {
      this.#interrupt(outcome.skipped);
      return never();
    }
    // Recorded by an attempt the interrupt reached: this one is interrupted at the same step.
    if (outcome.interrupt !== undefined) this.#interrupt(outcome.interrupt);
    return outcome.value;
  }

  /**
   * Resolves once no effect step runs, for a turn whose agent rests: no effect step follows one
   * that ends then, so no event-loop turns are waited for after it, as {@link settled} waits.
   */
  async drained(): Promise<void> {
    while (this.#running > 0) await new Promise<void>((resolve) => this.#waiters.add(resolve));
    this.#waiters.clear();
  }

  /** Resolves once no effect step runs (and none follows at once). */
  async settled(): Promise<void> {
    for (;;) {
      while (this.#running > 0) await new Promise<void>((resolve) => this.#waiters.add(resolve));
      this.#waiters.clear();
      // A step that just ended may be followed at once by the next (a batch's marker, then its calls).
      await quiesce();
      if (this.#running === 0) return;
    }
  }
}

/**
 * A step's outcome from its record. The step returns it as JSON text, which DBOS stores as a string:
 * DBOS serializes every step's output with SuperJSON, which walks the value (and reads it back) at
 * several times the cost of `JSON.stringify` for a model call's record (docs/engines.md, "What a
 * turn costs"), and the records are JSON data. A record written before that change holds the object.
 */
function fromRecord<T>(recorded: string | StepOutcome<T>): StepOutcome<T> {
  return typeof recorded === 'string' ? (JSON.parse(recorded) as StepOutcome<T>) : recorded;
}

/** A promise that never settles: the effect was stopped by an interrupt, the machine left it. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/** Lets the machine react to what was just settled: every promise reaction, then two turns of the event loop. */
export async function quiesce(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
