import type { InboxItem, SessionStore, TranscriptEntryInput } from './session-imports.js';
import { hasInbox } from './session-imports.js';

// What a server that does not carry a session's run has for it travels through the session's inbox in
// the store (the same items `agentloop send --interrupt` and the workers use): a cancel of the run (an
// AG-UI run, an A2A task) and entries for its transcript. The carrier hears them here.

/** The reason of the inbox interrupt that cancels one run (or task): it names the run. */
export function cancelReason(runId: string): string {
  return `cancelled by the client (run ${JSON.stringify(runId)})`;
}

/** The run an inbox interrupt's reason names (undefined for an interrupt that names none). */
function runNamed(reason: string | undefined): string | undefined {
  const match = /\(run ("(?:[^"\\]|\\.)*")\)$/.exec(reason ?? '');
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]!) as string;
  } catch {
    return undefined;
  }
}

/**
 * One watch of the store's inbox posts for a whole server (LISTEN/NOTIFY on PostgreSQL, a folder
 * watch on the file store), handed out by session id; without one, the carriers poll.
 */
export class InboxWakeups {
  readonly #store: SessionStore;
  readonly #listeners = new Map<string, Set<() => void>>();
  #watch: Promise<(() => void) | undefined> | undefined;
  /** Whether the store's watch is running (the carriers then poll seldom). */
  watching = false;

  constructor(store: SessionStore) {
    this.#store = store;
  }

  /** Calls `listener` when something may have been posted to `sessionId`'s inbox; returns its removal. */
  on(sessionId: string, listener: () => void): () => void {
    if (this.#watch === undefined && hasInbox(this.#store) && this.#store.watchInbox) {
      this.#watch = this.#store
        .watchInbox((id) => {
          const listeners =
            id === undefined ? [...this.#listeners.values()] : [this.#listeners.get(id) ?? new Set()];
          for (const set of listeners) for (const wake of set) wake();
        })
        .then(
          (stop) => {
            this.watching = true;
            return stop;
          },
          () => undefined,
        );
    }
    const set = this.#listeners.get(sessionId) ?? new Set();
    this.#listeners.set(sessionId, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(sessionId);
    };
  }

  /** Stops the store's watch. */
  async close(): Promise<void> {
    (await this.#watch)?.();
  }
}

/** The cancel a watch of a run's inbox hears: interrupts naming `runId` (or, posted during the run, none). */
export interface InboxCancel {
  runId: string;
  onCancel: (reason: string) => void;
}

/**
 * Watches a session's inbox while a server run carries the session (an AG-UI run, an A2A task's
 * turn, an MCP `ask_` turn), which makes the run the session's one writer in every process:
 * - `event` items (entries another process has for the transcript, such as an A2A push config set
 *   there: entry-for-writer.ts) are written with `write` as they come, then completed;
 * - with `cancel`, interrupts of run `runId` (posted by another server process, or by `agentloop send
 *   --interrupt` while the run goes on) call `onCancel` once. Interrupts already waiting when the
 *   watch starts that do not name this run, and any naming another run, are left over from runs that
 *   ended: they are completed without effect. Without `cancel`, interrupts are left in the inbox.
 * Nothing happens on a store without inboxes. With `empty` (a session made just now, whose inbox
 * nobody could have posted to yet), or without `cancel`, there is no first look: the poll (or the
 * store's wakeup) finds what comes.
 *
 * With `cancel` the first look decides which interrupts are left over (those it reads), so the run
 * must not start before `ready`: otherwise an interrupt posted once the run is under way but before a
 * slow first read (a busy pool) would be taken for a left-over one, and the run would never hear it.
 * `stop` resolves once a look under way has ended (call it before the session is let go, so nothing
 * is written after).
 */
export function watchInbox(
  store: SessionStore,
  threadId: string,
  options: {
    pollMs: number;
    /** The server's watch of the store's inbox posts; without it, the watch only polls. */
    wakeups?: InboxWakeups;
    empty?: boolean;
    /** Appends entries to the session's transcript the way the run's own entries go. */
    write: (entries: TranscriptEntryInput[]) => Promise<void>;
    cancel?: InboxCancel;
  },
): InboxWatch {
  if (!hasInbox(store)) return NO_WATCH;
  const { cancel } = options;
  let stopped = false;
  let first = options.empty !== true;
  let cancelled = false;
  let looking: Promise<void> | undefined;
  let again = false;
  const look = async (): Promise<void> => {
    if (looking) {
      again = true;
      return;
    }
    looking = once().finally(() => {
      looking = undefined;
      if (again && !stopped) {
        again = false;
        void look();
      }
    });
  };
  const once = async (): Promise<void> => {
    try {
      const items = await store.readInbox(threadId);
      const events = items.filter((item): item is InboxItem & { kind: 'event' } => item.kind === 'event');
      let written: typeof events = [];
      if (events.length > 0 && !stopped) {
        await options.write(
          events.map((item) => ({ kind: 'event' as const, event: item.event, data: item.data })),
        );
        written = events;
      }
      let done = written.map((item) => item.seq);
      if (cancel) {
        const interrupts = items.filter(
          (item): item is InboxItem & { kind: 'interrupt' } => item.kind === 'interrupt',
        );
        const mine = interrupts.filter((item) => {
          const named = runNamed(item.reason);
          return named === cancel.runId || (named === undefined && !first);
        });
        first = false;
        if (mine.length > 0 && !stopped && !cancelled) {
          cancelled = true;
          cancel.onCancel(mine[0]!.reason ?? 'interrupted through the session inbox');
        }
        done = [...interrupts.map((item) => item.seq), ...done];
      }
      if (done.length > 0) await store.completeInbox(threadId, done);
    } catch {
      // the store failed this time: the next look tries again
    }
  };
  const off = options.wakeups?.on(threadId, () => void look());
  const every = options.wakeups?.watching ? Math.max(options.pollMs, 1000) : options.pollMs;
  const timer = setInterval(() => void look(), every);
  timer.unref();
  let ready = DONE;
  if (cancel && options.empty !== true) {
    void look();
    ready = looking ?? DONE;
  }
  return {
    ready,
    stop: async () => {
      stopped = true;
      off?.();
      clearInterval(timer);
      await looking;
    },
  };
}

/** A watch of one session's inbox (see {@link watchInbox}). */
export interface InboxWatch {
  /** Resolves once the first look has sorted out left-over interrupts (at once when there is none). */
  ready: Promise<void>;
  /** Stops the watch; resolves once a look under way has ended. */
  stop: () => Promise<void>;
}

const DONE = Promise.resolve();
const NO_WATCH: InboxWatch = { ready: DONE, stop: () => DONE };
