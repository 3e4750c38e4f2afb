import type { DurableSteps } from '../../src/machines/durable-effects.js';

/** One step in the journal: its key from the moment it was asked for, its value once it recorded one. */
interface JournalEntry {
  key: string;
  done: boolean;
  value?: unknown;
}

/**
 * An in-memory durable engine for tests, journaled as Restate's is (and as DBOS numbers its steps): a
 * step takes the next position when it is asked for and records its value there when it ends. Each
 * `execution()` is one run of a handler: it replays the journal from the start (a recorded step
 * resolves with its record without running; a step that started and recorded nothing runs again),
 * and a step asked for in another order than recorded is a journal mismatch. `crash()` kills the
 * current execution: its steps still running never record.
 */
export class MemoryJournal {
  readonly entries: JournalEntry[] = [];
  /** Keys of the steps whose function ran, in the order they started (over all executions). */
  readonly ran: string[] = [];
  #epoch = 0;

  /** A new execution of the handler, replaying the journal from its start. */
  execution(): DurableSteps {
    const epoch = ++this.#epoch;
    let cursor = 0;
    return {
      step: async <T>(key: string, run: () => Promise<T>): Promise<T> => {
        if (epoch !== this.#epoch) return new Promise<T>(() => {});
        const position = cursor++;
        let entry = this.entries[position];
        if (entry && entry.key !== key) {
          throw new Error(
            `journal mismatch at step ${position}: recorded "${entry.key}", asked for "${key}"`,
          );
        }
        if (entry?.done) return entry.value as T;
        if (!entry) {
          entry = { key, done: false };
          this.entries[position] = entry;
        }
        this.ran.push(key);
        const value = await run();
        // A killed process records nothing: its step stays started without a value.
        if (epoch !== this.#epoch) return new Promise<T>(() => {});
        entry.done = true;
        entry.value = value;
        return value;
      },
    };
  }

  /** Kills the current execution: whatever it is running records nothing, ever. */
  crash(): void {
    this.#epoch++;
  }

  /** The step recorded under `key`, if any. */
  entry(key: string): JournalEntry | undefined {
    return this.entries.find((e) => e.key === key);
  }

  /** The keys in journal order. */
  keys(): string[] {
    return this.entries.map((e) => e.key);
  }
}
