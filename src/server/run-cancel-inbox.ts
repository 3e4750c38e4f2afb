import type { InboxItem, SessionStore } from './session-imports.js';
import { hasInbox } from './session-imports.js';

// A cancel sent to a server that does not carry the run (an AG-UI run, an A2A task) travels through the
// session's inbox in the store (the same items `agentloop send --interrupt` and the workers use); the
// carrier hears it here.

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

/**
 * Hears cancels of run `runId` posted to the thread's inbox (by another server process, or an
 * interrupt from `agentloop send --interrupt` posted while the run goes on) and calls `onCancel` once.
 * Interrupts already waiting when the watch starts that do not name this run, and any naming another
 * run, are left over from runs that ended: they are completed without effect. Returns the function
 * that stops the watch. Nothing happens on a store without inboxes. With `empty` (a session made just
 * now, whose inbox nobody could have posted to yet) there is no first look. With `onEvents`, the
 * entries other processes posted for the session's writer are written by it as they come.
 */
export function watchCancels(
  store: SessionStore,
  threadId: string,
  runId: string,
  onCancel: (reason: string) => void,
  options: {
    pollMs: number;
    wakeups: InboxWakeups;
    empty?: boolean;
    /**
     * Writes entries posted for the session's writer (`event` items: an A2A push config set in another
     * process); they are completed once it resolves. Without it they are left for the carrier that writes them.
     */
    onEvents?: (items: (InboxItem & { kind: 'event' })[]) => Promise<void>;
  },
): () => void {
  if (!hasInbox(store)) return () => {};
  let stopped = false;
  let first = options.empty !== true;
  let cancelled = false;
  let looking = false;
  let again = false;
  const look = async (): Promise<void> => {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      const items = await store.readInbox(threadId);
      const interrupts = items.filter(
        (item): item is InboxItem & { kind: 'interrupt' } => item.kind === 'interrupt',
      );
      const events = options.onEvents
        ? items.filter((item): item is InboxItem & { kind: 'event' } => item.kind === 'event')
        : [];
      let written: typeof events = [];
      if (events.length > 0 && !stopped) {
        await options.onEvents?.(events);
        written = events;
      }
      const mine = interrupts.filter((item) => {
        const named = runNamed(item.reason);
        return named === runId || (named === undefined && !first);
      });
      const stale = interrupts.filter((item) => !mine.includes(item));
      first = false;
      if (mine.length > 0 && !stopped && !cancelled) {
        cancelled = true;
        onCancel(mine[0]!.reason ?? 'interrupted through the session inbox');
      }
      const done = [...mine, ...stale, ...written].map((item) => item.seq);
      if (done.length > 0) await store.completeInbox(threadId, done);
    } catch {
      // the store failed this time: the next look tries again
    } finally {
      looking = false;
      if (again && !stopped) {
        again = false;
        void look();
      }
    }
  };
  const off = options.wakeups.on(threadId, () => void look());
  const every = options.wakeups.watching ? Math.max(options.pollMs, 1000) : options.pollMs;
  const timer = setInterval(() => void look(), every);
  timer.unref();
  if (options.empty !== true) void look();
  return () => {
    stopped = true;
    off();
    clearInterval(timer);
  };
}
