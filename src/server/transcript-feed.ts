import type { SessionStore, TranscriptEntry } from './session-imports.js';

type Entries = Parameters<SessionStore['appendTranscript']>[1];

/** A store that says the transcript's last seq without reading it (the file store). */
interface LastSeqStore {
  transcriptLastSeq(id: string): Promise<number>;
}

/**
 * Hears one session's transcript as it is written, with the seq numbers the store gives: a view of
 * the store that passes every call through and, for appends to `sessionId`, publishes the entries
 * once they are durable, stamped with their seqs, in order. The seqs are counted from `lastSeq`
 * (the transcript's last seq when the feed was made), which is exact while this view is the
 * session's only writer: the agent that holds its lease, and the server through this view. On a store
 * that says its last seq (the file store), each append is checked against it; once another process
 * has written to the session (an A2A push config set elsewhere), the feed publishes the store's own
 * entries, read back, from then on: theirs included, with the store's seqs.
 */
export class TranscriptFeed {
  readonly store: SessionStore;
  #lastSeq: number;
  /** The seq of the last entry published. */
  #publishedSeq: number;
  /** Another writer was seen: every append is published from the store's own entries. */
  #fromStore = false;
  #published: Promise<void> = Promise.resolve();
  readonly #listeners = new Set<(entries: TranscriptEntry[]) => void>();

  constructor(inner: SessionStore, sessionId: string, lastSeq: number) {
    this.#lastSeq = lastSeq;
    this.#publishedSeq = lastSeq;
    const checked =
      typeof (inner as Partial<LastSeqStore>).transcriptLastSeq === 'function'
        ? (inner as unknown as LastSeqStore)
        : undefined;
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
      const publish = async () => {
        await done;
        if (checked && !this.#fromStore) {
          // Every append counted so far is queued before this question, so the store's answer is the
          // count unless someone else wrote.
          const expected = this.#lastSeq;
          const last = await checked.transcriptLastSeq(sessionId);
          if (last !== expected) {
            this.#fromStore = true;
            this.#lastSeq += last - expected;
          }
        }
        if (!this.#fromStore) {
          this.#publish(stamped);
          return;
        }
        const { entries: all } = await inner.readTranscript(sessionId);
        const last = all.at(-1)?.seq ?? 0;
        if (last > this.#lastSeq) this.#lastSeq = last;
        this.#publish(all);
      };
      this.#published = this.#published.then(publish, publish).catch(() => {});
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

  /** Publishes the entries past the last published one, in seq order. */
  #publish(entries: TranscriptEntry[]): void {
    const fresh = entries.filter((entry) => entry.seq > this.#publishedSeq);
    if (fresh.length === 0) return;
    this.#publishedSeq = fresh.at(-1)!.seq;
    for (const listener of this.#listeners) listener(fresh);
  }
}
