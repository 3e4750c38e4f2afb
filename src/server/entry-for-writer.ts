import { isDeepStrictEqual } from 'node:util';
import {
  hasInbox,
  hasOwnership,
  newOwnerName,
  type SessionLease,
  type SessionStore,
  SessionStoreError,
} from './session-imports.js';

/** How long the session is held to write an entry when no process carries it (ms). */
const WRITE_LEASE_MS = 30_000;

/** An event entry another process has for a session's transcript. */
export interface EntryForWriter {
  event: string;
  data: unknown;
}

/**
 * How {@link appendAsWriter} ended: `written` (the entry is in the transcript), `no-inbox` (another
 * process carries the session and the store has no inbox to reach it through), `not-taken` (the
 * carrier did not write it in `waitMs`; the post was taken back).
 */
export type AppendOutcome = 'written' | 'no-inbox' | 'not-taken';

/**
 * Writes an event entry to a session's transcript so that the session keeps one writer. When no
 * process carries the session, it is written here under a lease of its own (fenced, at once). When
 * one does, it is posted to the session's inbox (an `event` item) and the carrier writes it
 * (run-cancel-inbox.ts `watchInbox`); this resolves once it is in the transcript, or writes it here
 * after all when the carrier let the session go before reading it. A store without leases has one
 * process: the entry is appended.
 */
export async function appendAsWriter(
  store: SessionStore,
  sessionId: string,
  entry: EntryForWriter,
  options: { pollMs: number; waitMs: number },
): Promise<AppendOutcome> {
  const input = { kind: 'event' as const, event: entry.event, data: entry.data };
  if (!hasOwnership(store)) {
    await store.appendTranscript(sessionId, [input]);
    return 'written';
  }
  const owner = newOwnerName();
  /** Runs `write` holding the session; false when another owner holds it. */
  const holding = async (write: (lease: SessionLease) => Promise<void>): Promise<boolean> => {
    let lease: SessionLease;
    try {
      lease = await store.acquireLease(sessionId, { owner, leaseMs: WRITE_LEASE_MS });
    } catch (error) {
      if (error instanceof SessionStoreError && error.code === 'in_use') return false;
      throw error;
    }
    try {
      await write(lease);
    } finally {
      await store.releaseLease(lease).catch(() => {});
    }
    return true;
  };
  if (await holding((lease) => store.appendTranscript(sessionId, [input], { lease }))) return 'written';
  if (!hasInbox(store)) return 'no-inbox';
  const from = (await store.readTranscript(sessionId)).entries.at(-1)?.seq ?? 0;
  const item = await store.postInbox(sessionId, input);
  if (!item) return 'not-taken';
  const written = async () =>
    (await store.readTranscript(sessionId)).entries.some(
      (e) =>
        e.seq > from &&
        e.kind === 'event' &&
        e.event === entry.event &&
        isDeepStrictEqual(e.data, entry.data),
    );
  const until = Date.now() + options.waitMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    if (await written()) return 'written';
    // The carrier let the session go before it read the item: write it here, and complete the item.
    const here = await holding(async (lease) => {
      if (!(await written())) await store.appendTranscript(sessionId, [input], { lease });
      await store.completeInbox(sessionId, [item.seq], { lease });
    });
    if (here) return 'written';
    if (Date.now() >= until) {
      await store.completeInbox(sessionId, [item.seq]);
      return (await written()) ? 'written' : 'not-taken';
    }
  }
}
