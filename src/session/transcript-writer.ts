import type { TranscriptEntryInput } from './transcript.js';

interface Waiting {
  entries: readonly TranscriptEntryInput[];
  /** Not kept when the call carrying them fails: the caller acts on the failure instead. */
  discard: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Appends one session's transcript entries in the order they are given, one store call at a time.
 * Entries that a failed call did not write are kept and go first in the next call, so an entry is
 * never written before one given earlier: the transcript stays append-only and without gaps even
 * when the disk fills up and empties again. Entries given while a call runs go out together in the
 * next one (fewer fsyncs when appends pile up).
 */
export class OrderedTranscriptWriter {
  readonly #append: (entries: TranscriptEntryInput[]) => Promise<void>;
  readonly #onFailure: (error: unknown, entries: number) => void;
  /** Entries a failed call did not write, oldest first: they go before anything else. */
  #unwritten: TranscriptEntryInput[] = [];
  /** Why the last call failed; kept while its entries are unwritten. */
  #lastError: unknown;
  #waiting: Waiting[] = [];
  /** Entries given with `hold`: they go out first with the next store call (`write`, `drain`, `release`). */
  #held: Waiting[] = [];
  #running: Promise<void> | undefined;

  /**
   * `append` is the store's `appendTranscript` for the session; `onFailure` hears each failed call
   * once (with how many entries it carried), whoever waits for them.
   */
  constructor(
    append: (entries: TranscriptEntryInput[]) => Promise<void>,
    onFailure: (error: unknown, entries: number) => void,
  ) {
    this.#append = append;
    this.#onFailure = onFailure;
  }

  /** How many entries wait to be written again after a failed call. */
  get unwritten(): number {
    return this.#unwritten.length;
  }

  /** The error of the failed call whose entries still wait, or undefined when nothing waits. */
  get failure(): unknown {
    return this.#unwritten.length > 0 ? this.#lastError : undefined;
  }

  /**
   * Writes `entries` after everything given before. Resolves once they are durable; rejects with the
   * store's error when the call carrying them failed: they are kept and written first by the next
   * call, unless `discard` says the caller acts on the failure instead (a tool call whose start cannot
   * be recorded does not run, so its start must not be written later).
   */
  write(entries: readonly TranscriptEntryInput[], options: { discard?: boolean } = {}): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push(...this.#held.splice(0), {
        entries,
        discard: options.discard === true,
        resolve,
        reject,
      });
      // Started a microtask later, so that the entries of one machine step (an assistant message and
      // its calls' starts) go out in one store call.
      this.#running ??= Promise.resolve().then(() => this.#run());
    });
  }

  /**
   * Keeps `entries` for the next store call instead of making one for them: they go out first with
   * the entries of the next `write`, or with `drain` or `release`, in one durable append. For entries
   * whose content the transcript already holds durably in another form (a tool's result message, after
   * its `tool_call_finished`): a crash before they are written loses nothing a restore needs
   * (docs/persistence.md, "Appends"). Resolves once they are written.
   */
  hold(entries: readonly TranscriptEntryInput[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#held.push({ entries, discard: false, resolve, reject });
    });
  }

  /** Sends held entries now (a save, a flush), in one store call. */
  release(): void {
    if (this.#held.length > 0) void this.write([]).catch(() => {});
  }

  /** Writes what earlier calls could not, and held entries; rejects when that fails. Waits for a running call first. */
  async drain(): Promise<void> {
    this.release();
    while (this.#running) await this.#running;
    if (this.#unwritten.length > 0) await this.write([]);
  }

  async #run(): Promise<void> {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0);
      const entries = [...this.#unwritten, ...batch.flatMap((w) => w.entries)];
      try {
        if (entries.length > 0) await this.#append(entries);
        this.#unwritten = [];
        for (const w of batch) w.resolve();
      } catch (error) {
        this.#unwritten = [...this.#unwritten, ...batch.flatMap((w) => (w.discard ? [] : w.entries))];
        this.#lastError = error;
        this.#onFailure(error, entries.length);
        for (const w of batch) w.reject(error);
      }
    }
    this.#running = undefined;
  }
}

/**
 * Whether entries are only tool-result messages joining the conversation: their text is in the
 * transcript already, durably, as their calls' `tool_call_finished` lines (a restore answers the calls
 * from those), so they are held for the next append (`hold`) instead of making one of their own.
 * Results given without a run (an interrupt, a cut-off reply) come with a rest point, whose save
 * writes them first (docs/persistence.md, "Appends").
 */
export function onlyToolResults(entries: readonly TranscriptEntryInput[]): boolean {
  return entries.length > 0 && entries.every((e) => e.kind === 'message' && e.message.role === 'tool');
}
