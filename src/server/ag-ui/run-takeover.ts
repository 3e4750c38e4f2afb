import type { Agent } from '../../agent/agent.js';
import { DEFAULTS } from '../../defaults.js';
import { interruptedByUser } from '../../workers/carry-session.js';
import { scrubForClient } from '../client-text.js';
import { HttpError } from '../http-error.js';
import { type InboxWakeups, watchInbox } from '../run-cancel-inbox.js';
import { hasOwnership, newOwnerName, SessionStoreError } from '../session-imports.js';
import { openThread, ownerOf, type ThreadContext } from '../thread-sessions.js';
import { TranscriptFeed } from '../transcript-feed.js';
import type { ActiveRun, ActiveRuns } from './active-runs.js';
import { recordedExpiries, withExpiry } from './interrupt-expiry.js';
import { RunEventMapper } from './run-event-mapper.js';
import { latestRun } from './thread-runs.js';
import { RUN_ENDED_ENTRY } from './transcript-events.js';

/** What a takeover needs besides the thread: this process's runs, and how it hears cancels. */
export interface TakeoverOptions {
  active: ActiveRuns;
  pollMs: number;
  wakeups: InboxWakeups;
}

/**
 * What became of the thread's latest run: carried here (it was taken over now, or this process
 * carries it already), carried by a live process elsewhere (`busy`), or not running (`none`).
 */
export type TakeoverOutcome = 'here' | 'busy' | 'none';

/**
 * Takes over the thread's latest run when it has not ended and no process holds the session's lease:
 * the process that carried it died (its lease lapsed, as a worker's does; on the file store, a lease
 * of a dead pid on this host is free at once). With the lease taken, the session is restored by
 * today's rules (a call that had started without a recorded result is re-run when idempotent and
 * answered "outcome unknown" otherwise; recorded results stand) and the turn goes on as a worker
 * resumes it: the run's events go to the transcript as they are written (clients reconnected to any
 * process read them there), and its end is written once, by the one lease holder. Returns at once;
 * the run goes on in this process as one of `active`.
 */
export async function takeOverRun(
  context: ThreadContext,
  threadId: string,
  options: TakeoverOptions,
): Promise<TakeoverOutcome> {
  const { store } = context;
  if (options.active.has(threadId)) return 'here';
  if (!hasOwnership(store)) return 'none';
  let release!: () => void;
  const run: ActiveRun = {
    runId: '',
    agent: undefined as unknown as Agent,
    cancelled: false,
    done: new Promise((r) => (release = r)),
  };
  options.active.set(threadId, run); // this process tries once at a time
  let lease: Awaited<ReturnType<typeof store.acquireLease>> | undefined;
  let carrying = false;
  try {
    try {
      lease = await store.acquireLease(threadId, {
        owner: newOwnerName(),
        leaseMs: context.leaseMs ?? DEFAULTS.leaseMs,
      });
    } catch (error) {
      if (error instanceof SessionStoreError && error.code === 'in_use') return 'busy';
      throw error;
    }
    // Read with the lease held: nothing writes the session meanwhile.
    const { entries } = await store.readTranscript(threadId);
    const last = latestRun(entries);
    if (!last || last.ended) return 'none';
    const record = await store.load(threadId);
    const feed = new TranscriptFeed(store, threadId, entries.at(-1)?.seq ?? 0);
    const principal = last.principal ?? (record ? ownerOf(record) : context.principal);
    const agent = await openThread({ ...context, store: feed.store, principal }, threadId, record, {
      lease,
    });
    Object.assign(run, { runId: last.runId, agent, feed, cancelled: interruptedByUser(entries) });
    carrying = true;
    const { approvalTimeoutMs } = context;
    void carry(agent, run, {
      threadId,
      protocol10: last.protocol10,
      feed,
      entries,
      options,
      approvalTimeoutMs,
    }).finally(() => {
      options.active.delete(threadId);
      release();
    });
    return 'here';
  } catch (error) {
    if (error instanceof HttpError && error.code === 'thread_busy') return 'busy';
    throw error;
  } finally {
    if (!carrying) {
      if (lease) await store.releaseLease(lease).catch(() => {});
      options.active.delete(threadId);
      release();
    }
  }
}

/** Goes on with a restored run until it ends, then writes its end and lets the session go. */
async function carry(
  agent: Agent,
  run: ActiveRun,
  taken: {
    threadId: string;
    protocol10: boolean;
    feed: TranscriptFeed;
    entries: Parameters<typeof interruptedByUser>[0];
    options: TakeoverOptions;
    approvalTimeoutMs: number | undefined;
  },
): Promise<void> {
  const { threadId, feed } = taken;
  const scrub = (text: string) => scrubForClient(text, agent.redactor.redact);
  // Nobody streams from this process's bus: the live half of the events has no reader here.
  const mapper = new RunEventMapper(
    agent,
    {
      threadId,
      runId: run.runId,
      protocol10: taken.protocol10,
      cancelled: () => run.cancelled,
      scrub,
      open: new Set(),
    },
    () => {},
  );
  const inbox = watchInbox(feed.store, threadId, {
    pollMs: taken.options.pollMs,
    wakeups: taken.options.wakeups,
    write: (entries) => feed.append(entries),
    cancel: {
      runId: run.runId,
      onCancel: (reason) => {
        run.cancelled = true;
        agent.interrupt(reason);
      },
    },
  });
  try {
    await inbox.ready;
    let resolveEnded!: () => void;
    const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
    const off = agent.on('*', (event) => {
      mapper.onEvent(event);
      if (mapper.ended) resolveEnded();
    });
    const state = agent.state;
    const context = agent.context;
    if (state === 'Interrupted' && !run.cancelled) {
      // Cut off by the crash (the restore rebuilt it): go on as the user would with /continue.
      agent.resume().catch((error: unknown) => mapper.fail('error', String(error)));
    } else if (state === 'WaitingApproval') {
      mapper.waiting(Date.now());
    } else {
      // The turn had come to rest; only the run's end was not written.
      mapper.rested(context.terminateReason ?? (state === 'Error' ? 'error' : 'completed'), context.response);
    }
    if (mapper.ended) resolveEnded();
    await ended;
    off();
    await agent.flush();
    const final = withExpiry(mapper.final, recordedExpiries(taken.entries), taken.approvalTimeoutMs);
    await feed.store.appendTranscript(threadId, [
      { kind: 'event', event: RUN_ENDED_ENTRY, data: { runId: run.runId, event: final } },
    ]);
    await feed.settled();
  } finally {
    await inbox.stop();
    await agent.close().catch(() => {});
  }
}
