import type { AgentOptions } from '../agent/agent-options.js';
import { DEFAULTS } from '../defaults.js';
import { hasInbox } from '../session/session-inbox.js';
import { hasOwnership, newOwnerName } from '../session/session-lease.js';
import type { SessionRecord, SessionStore } from '../session/session-store.js';
import { carrySession } from './carry-session.js';

/** Options of {@link startWorker}. */
export interface WorkerOptions {
  /** Where sessions and their inboxes are (a PostgresSessionStore for many machines). */
  store: SessionStore;
  /** The agent options for a session (its saved record, or undefined for a new one); store and session are set by the worker. */
  agent: (record: SessionRecord | undefined) => AgentOptions | Promise<AgentOptions>;
  /** Sessions carried at once (default 4). */
  concurrency?: number;
  /** Lease length (default `DEFAULTS.leaseMs`): a crashed worker's sessions go to another after this long. */
  leaseMs?: number;
  /** How often to look for work when no wakeup came (default 500 ms), and for interrupts during a turn. */
  pollMs?: number;
  /** Hears when the worker takes a session and when it lets it go (with the state it rests in). */
  onSession?: (
    event: { sessionId: string; phase: 'claimed' } | { sessionId: string; phase: 'released'; state: string },
  ) => void;
  /** Hears what went wrong with one session (the worker goes on with the others). Default: stderr. */
  onError?: (error: unknown, sessionId: string) => void;
}

/** A running worker. */
export interface Worker {
  /** Stops claiming; resolves once the sessions it carries have come to rest and were let go. */
  stop(): Promise<void>;
  /** Sessions being carried now. */
  readonly active: number;
}

/**
 * Starts a worker: it claims sessions whose inbox has inputs (`FOR UPDATE SKIP LOCKED` on
 * PostgreSQL), up to `concurrency` at a time, carries each with today's restore rules until its
 * inbox is applied, and lets it go. Woken by LISTEN/NOTIFY (PostgreSQL) or in-process posts (memory
 * store); polls as a fallback. See docs/scale-out.md.
 */
export function startWorker(options: WorkerOptions): Worker {
  const store = options.store;
  if (!hasInbox(store) || !hasOwnership(store)) {
    throw new Error(
      'startWorker: this store has no inboxes or leases (use a PostgresSessionStore, a FileSessionStore for processes on one machine, or a MemorySessionStore in one process)',
    );
  }
  const concurrency = options.concurrency ?? 4;
  const leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
  const pollMs = options.pollMs ?? 500;
  const owner = newOwnerName();
  const onError =
    options.onError ??
    ((error: unknown, id: string) =>
      process.stderr.write(`agentloop worker: session "${id}": ${String(error)}\n`));
  const carried = new Map<string, Promise<void>>();
  let stopping = false;
  let wake: (() => void) | undefined;
  /** Set by a wakeup that came while the loop was not waiting (during a claim): it looks again at once. */
  let nudged = false;
  const nudge = () => {
    nudged = true;
    wake?.();
  };
  /** The carried sessions' listeners for posts to their inbox (an interrupt during a turn). */
  const posted = new Map<string, () => void>();
  let watching = false;
  const unwatch = store
    .watchInbox?.((id) => {
      nudge();
      if (id !== undefined) posted.get(id)?.();
      else for (const listener of posted.values()) listener();
    })
    .then((stop) => {
      watching = true;
      return stop;
    })
    .catch(() => undefined);

  const loop = (async () => {
    // The first claim waits for the wakeups to be on: a post between an earlier first claim and the
    // LISTEN would be heard by neither, and waited for a poll.
    await unwatch;
    while (!stopping) {
      nudged = false;
      const free = concurrency - carried.size;
      if (free > 0) {
        let leases: Awaited<ReturnType<typeof store.claimSessions>> = [];
        try {
          leases = await store.claimSessions({ owner, leaseMs, limit: free });
        } catch (error) {
          onError(error, '(claim)');
        }
        for (const lease of leases) {
          options.onSession?.({ sessionId: lease.sessionId, phase: 'claimed' });
          const run = carrySession({
            store,
            lease,
            leaseMs,
            // Woken by the store when something is posted: polling is the fallback only.
            pollMs: watching ? pollMs : Math.min(pollMs, 100),
            onPosted: (listener) => {
              posted.set(lease.sessionId, listener);
              return () => posted.delete(lease.sessionId);
            },
            agent: options.agent,
            stopping: () => stopping,
          })
            .then((state) => options.onSession?.({ sessionId: lease.sessionId, phase: 'released', state }))
            .catch((error: unknown) => onError(error, lease.sessionId))
            .finally(() => {
              carried.delete(lease.sessionId);
              nudge();
            });
          carried.set(lease.sessionId, run);
        }
        if (leases.length > 0 && leases.length === free) continue;
      }
      // A post or a finished session heard during the claim may not be in what the claim saw.
      if (nudged) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  return {
    get active() {
      return carried.size;
    },
    async stop() {
      stopping = true;
      nudge();
      await loop;
      await Promise.all(carried.values());
      (await unwatch)?.();
    },
  };
}
