import type { SessionStore, TranscriptEntry } from './session-imports.js';

type Entries = Parameters<SessionStore['appendTranscript']>[1];

/**
 * Hears one session's transcript as it is written, with the seq numbers the store gives: a view of
 * the store that passes every call through and, for appends to `sessionId`, publishes the entries
 * once they are durable, stamped with their seqs, in order. The seqs are counted from `lastSeq`
 * (the transcript's last seq when the feed was made), which is exact while this view is the
 * session's only writer: the agent that holds its lease, and the server through this view.
 */
export class TranscriptFeed {
  readonly store: SessionStore;
  #lastSeq: number;
  #published: Promise<void> = Promise.resolve();
  readonly #listeners = new Set<(entries: TranscriptEntry[]) => void>();

  constructor(inner: SessionStore, sessionId: string, lastSeq: number) {
    this.#lastSeq = lastSeq;
    const append = (
      id: string,
      entries: Entries,
      options?: Parameters<SessionStore['appendTranscript']>[2],
    ) => {
      const done = inner.appendTranscript(id, entries, options);
      if (id !== sessionId || entries.length === 0) return done;
      const first = this.#lastSeq + 1;
      this.#lastSeq += entries.length;
      const at = new Date().toISOString();
      const stamped = entries.map((entry, i) => ({ at, ...entry, seq: first + i }) as TranscriptEntry);
      this.#published = this.#published.then(
        () => done.then(() => this.#publish(stamped)),
        () => done.then(() => this.#publish(stamped)),
      );
      return done;
    };
    this.store = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'appendTranscript') return append;
        const value = Reflect.get(target, prop); // the store itself as `this`: its private fields work
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** The seq of the last entry written through the feed (or found when it was made). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Hears entries as they become durable; returns the function that stops listening. */
  listen(listener: (entries: TranscriptEntry[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once every append so far has been published (or failed). */
  async settled(): Promise<void> {
    await this.#published.catch(() => {});
  }

  #publish(entries: TranscriptEntry[]): void {
    for (const listener of this.#listeners) listener(entries);
  }
}
