import type { SessionStore, TranscriptEntry } from './session-imports.js';

type Entries = Parameters<SessionStore['appendTranscript']>[1];

/** Entries waiting to go out with the session's next append through the view (see `hold`). */
interface Held {
  entries: Entries;
  after: boolean;
  stamped: ((lastSeq: number) => void) | undefined;
  resolve: () => void;
}

/**
 * Hears one session's transcript as it is written, with the seq numbers the store gives: a view of
 * the store that passes every call through and, for appends to `sessionId`, publishes the entries
 * once they are durable, stamped with their seqs, in order. The seqs are counted from `lastSeq`
 * (the transcript's last seq when the feed was made), which is exact because this view is the
 * session's only writer: the agent that holds its lease, and the server through this view (an entry
 * another process has for the session comes through the session's inbox and is written here:
 * run-cancel-inbox.ts).
 */
export class TranscriptFeed {
  readonly store: SessionStore;
  #lastSeq: number;
  /** The seq of the last entry published. */
  #publishedSeq: number;
  #published: Promise<void> = Promise.resolve();
  readonly #listeners = new Set<(entries: TranscriptEntry[]) => void>();
  #held: Held[] = [];
  readonly #inner: SessionStore;
  readonly #sessionId: string;

  constructor(inner: SessionStore, sessionId: string, lastSeq: number) {
    this.#lastSeq = lastSeq;
    this.#publishedSeq = lastSeq;
    this.#inner = inner;
    this.#sessionId = sessionId;
    const append = (
      id: string,
      entries: Entries,
      options?: Parameters<SessionStore['appendTranscript']>[2],
    ) =>
      id === sessionId && entries.length > 0
        ? this.#append(entries, options)
        : inner.appendTranscript(id, entries, options);
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

  /**
   * Keeps `entries` to go out in the session's next append through the view (the agent's), in the
   * same durable write: before its entries, or with `after` behind them (so that they are never
   * durable without what the agent wrote with them). `stamped` hears the seq of the last of them once
   * it is given. Resolves once they are durable: the entries of a failed append are kept for the next
   * one (pending until then). `writeHeld` writes what no append took.
   */
  hold(
    entries: Entries,
    options: { after?: boolean; stamped?: (lastSeq: number) => void } = {},
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#held.push({ entries, after: options.after === true, stamped: options.stamped, resolve });
    });
  }

  /** Appends the held entries that no append took yet, in one append (nothing when none wait); rejects when it fails (they stay held). */
  async writeHeld(): Promise<void> {
    if (this.#held.length === 0) return;
    await this.#append([], undefined);
  }

  /**
   * Appends entries of the server's own (not the agent's) now: entries held to go before go out with
   * them, those held `after` wait for the agent's next append (the turn's end is never durable before
   * the rest point it is held behind).
   */
  append(entries: Entries): Promise<void> {
    return this.#append(entries, undefined, false);
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

  /** One append to the session, carrying the held entries (without `after`: those before only); stamps and publishes them all once durable. */
  #append(
    own: Entries,
    options: Parameters<SessionStore['appendTranscript']>[2],
    withAfter = true,
  ): Promise<void> {
    const held = withAfter ? this.#held.splice(0) : this.#held.filter((h) => !h.after);
    if (!withAfter) this.#held = this.#held.filter((h) => h.after);
    const before = held.filter((h) => !h.after);
    const after = held.filter((h) => h.after);
    const entries = [...before.flatMap((h) => h.entries), ...own, ...after.flatMap((h) => h.entries)];
    const done = this.#inner.appendTranscript(this.#sessionId, entries, options);
    const first = this.#lastSeq + 1;
    this.#lastSeq += entries.length;
    let seq = first - 1;
    for (const h of [...before, undefined, ...after]) {
      seq += h ? h.entries.length : own.length;
      h?.stamped?.(seq);
    }
    const at = new Date().toISOString();
    const stamped = entries.map((entry, i) => ({ at, ...entry, seq: first + i }) as TranscriptEntry);
    const publish = async () => {
      await done;
      this.#publish(stamped);
    };
    this.#published = this.#published.then(publish, publish).catch(() => {});
    if (held.length > 0) {
      done.then(
        () => {
          for (const h of held) h.resolve();
        },
        // Kept, in order, for the next append (or `writeHeld`).
        () => this.#held.unshift(...held),
      );
    }
    return done;
  }

  /** Publishes the entries past the last published one, in seq order. */
  #publish(entries: TranscriptEntry[]): void {
    const fresh = entries.filter((entry) => entry.seq > this.#publishedSeq);
    if (fresh.length === 0) return;
    this.#publishedSeq = fresh.at(-1)!.seq;
    for (const listener of this.#listeners) listener(fresh);
  }
}
