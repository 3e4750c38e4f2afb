import type { TraceCarrier } from '../telemetry/agent-telemetry.js';
import type { LeaseRequest, SessionLease, WriteOptions } from './session-lease.js';
import type { TranscriptEntry } from './transcript.js';
import { APPROVAL_EVENT } from './transcript-replay.js';

/** An input for a session, posted by a client and applied by whichever worker carries the session. */
export type InboxInput =
  /**
   * A user message (to an unknown session id: the session is created); `trace`: the sender's trace
   * context, the parent of the turn it starts (read as untrusted: an invalid one is ignored).
   */
  | { kind: 'message'; text: string; trace?: TraceCarrier }
  /** The answer to a pending approval; a second answer to the same call is refused at the post. */
  | { kind: 'approval'; toolCallId: string; approved: boolean; always?: boolean; reason?: string }
  /** Stop the running turn. */
  | { kind: 'interrupt'; reason?: string }
  /**
   * An event entry for the session's transcript, written by whichever process carries the session, so
   * that a session has one writer (an A2A push config set in a process that does not run the turn).
   */
  | { kind: 'event'; event: string; data?: unknown };

/** An input as the inbox keeps it: numbered per session in post order. */
export type InboxItem = InboxInput & {
  /** Position in the session's inbox, from 1. */
  seq: number;
  /** ISO time of the post. */
  at: string;
};

/**
 * What a store implements to hold inboxes (see docs/scale-out.md). Items stay in the inbox until a
 * worker completes them after their effect came to rest, so a crash mid-turn leaves them for the next
 * owner, who finds in the transcript which of them were applied already.
 */
export interface SessionInboxStore {
  /**
   * Adds an input to the session's inbox and returns it; `undefined` when it is an answer to an
   * approval that was answered already (a second browser, a second click): applied once.
   */
  postInbox(id: string, input: InboxInput): Promise<InboxItem | undefined>;
  /** The session's items not completed yet, in post order. */
  readInbox(id: string): Promise<InboxItem[]>;
  /** Marks items done (refused with `stale_lease` when `options.lease` no longer holds the session). */
  completeInbox(id: string, seqs: readonly number[], options?: WriteOptions): Promise<void>;
  /**
   * Takes up to `limit` sessions that have items to apply and no live lease, each with a new lease
   * for `request.owner` (`FOR UPDATE SKIP LOCKED` on PostgreSQL: two workers never take one session).
   */
  claimSessions(request: LeaseRequest & { limit: number }): Promise<SessionLease[]>;
  /**
   * Calls `listener` with the session's id when items may have been posted to its inbox (LISTEN/NOTIFY
   * on PostgreSQL, in-process for the memory store; no id: any session may have some); returns a
   * function that stops listening. Optional: workers poll as well.
   */
  watchInbox?(listener: (sessionId?: string) => void): Promise<() => void>;
  /**
   * Calls `listener` with the session's id when it was saved (a rest point), so that clients waiting
   * for a state need not poll (LISTEN/NOTIFY on PostgreSQL); returns a function that stops listening.
   * Optional: clients poll as well.
   */
  watchSaves?(listener: (sessionId?: string) => void): Promise<() => void>;
}

/** Whether a store holds inboxes. */
export function hasInbox<T extends object>(store: T): store is T & SessionInboxStore {
  const s = store as Partial<SessionInboxStore>;
  return (
    typeof s.postInbox === 'function' &&
    typeof s.readInbox === 'function' &&
    typeof s.completeInbox === 'function' &&
    typeof s.claimSessions === 'function'
  );
}

/**
 * The inbox items the transcript says were applied: a user message or an approval answer written with
 * the `inbox` seq it came from (in the same transcript line, so it is applied and marked in one write).
 * A new owner skips them, even when the owner before it died before completing them.
 */
export function appliedInboxSeqs(entries: Iterable<TranscriptEntry>): Set<number> {
  const seqs = new Set<number>();
  for (const entry of entries) {
    if (entry.kind === 'message' && typeof entry.inbox === 'number') seqs.add(entry.inbox);
    if (entry.kind === 'event' && entry.event === APPROVAL_EVENT) {
      const inbox = (entry.data as { inbox?: unknown } | undefined)?.inbox;
      if (typeof inbox === 'number') seqs.add(inbox);
    }
  }
  return seqs;
}
