import { hasInbox, type InboxItem, type SessionInboxStore } from '../session/session-inbox.js';
import { assertValidSessionId, type SessionStore } from '../session/session-store.js';
import type { AgentTelemetry, TraceCarrier } from '../telemetry/agent-telemetry.js';
import { type SessionView, sessionView } from './session-view.js';

export type { SessionView } from './session-view.js';

/** What a client talks to: a store that holds inboxes (the file, memory and Postgres stores). */
export type InboxSessionStore = SessionStore & SessionInboxStore;

/** Posts inputs to sessions' inboxes and reads their state; workers apply the inputs (docs/scale-out.md). */
export interface SessionClient {
  /** Posts a user message; to an unknown id, the session is created by the worker that takes it. */
  send(sessionId: string, text: string): Promise<InboxItem>;
  /**
   * Answers a pending approval. False (and nothing posted) when the call is not pending or was
   * answered already: two browsers, two clicks, one answer.
   */
  approve(sessionId: string, toolCallId: string, options?: { always?: boolean }): Promise<boolean>;
  /** Declines a pending approval; false as for `approve`. */
  reject(sessionId: string, toolCallId: string, reason?: string): Promise<boolean>;
  /** Asks the worker carrying the session to stop the running turn. */
  interrupt(sessionId: string): Promise<void>;
  /** The session as last saved, or undefined when it has no record yet. */
  get(sessionId: string): Promise<SessionView | undefined>;
  /**
   * Resolves with the session once it rests in one of `states` with its inbox applied (default:
   * `AwaitingInput`, `Completed`, `WaitingApproval`, `Interrupted`, `Error`); rejects after `timeoutMs`.
   */
  waitFor(
    sessionId: string,
    options?: { states?: readonly string[]; timeoutMs?: number },
  ): Promise<SessionView>;
}

const SETTLED = ['AwaitingInput', 'Completed', 'WaitingApproval', 'Interrupted', 'Error'];

/**
 * A client of the sessions in `store` (any process: the inputs travel through the store). `waitFor`
 * looks again when the store says the session was saved (`watchSaves`: LISTEN/NOTIFY on PostgreSQL),
 * and every `pollMs` (default 50) as well; with wakeups, the fallback look is at most once a second.
 */
export function createSessionClient(options: {
  store: SessionStore;
  pollMs?: number;
  /** With telemetry (`otelTelemetry()`), a message carries the sender's active trace context to its turn. */
  telemetry?: AgentTelemetry;
}): SessionClient {
  const store = options.store;
  if (!hasInbox(store)) {
    throw new Error(
      'createSessionClient: this store holds no inboxes (use a PostgresSessionStore, a FileSessionStore for processes on one machine, or a MemorySessionStore in one process)',
    );
  }
  const pollMs = options.pollMs ?? 50;
  /** Wakeups of the waiting `waitFor` calls, by session id. */
  const waiting = new Map<string, Set<() => void>>();
  let watched: Promise<boolean> | undefined;
  const watchSaves = () => {
    watched ??= (
      store.watchSaves?.((id) => {
        const wakes =
          id === undefined ? [...waiting.values()].flatMap((s) => [...s]) : [...(waiting.get(id) ?? [])];
        for (const wake of wakes) wake();
      }) ?? Promise.reject(new Error('no wakeups'))
    ).then(
      () => true,
      () => false,
    );
    return watched;
  };
  /**
   * The record and the number of open inputs: what `waitFor` looks at each time. The inbox is read
   * first, the record after it: a worker saves the record of what an input did before it completes the
   * input, so an empty inbox read first means the record read next shows it. Read side by side, the
   * record could come from before the input was applied and the inbox from after it was completed (a
   * pool opening a connection for one of the two), and the session seemed to rest where it was.
   */
  const peek = async (sessionId: string) => {
    assertValidSessionId(sessionId);
    const inbox = await store.readInbox(sessionId);
    const record = await store.load(sessionId);
    return { record, inbox: inbox.length };
  };
  /** The view of what `peek` saw; the transcript (read after the record) holds its conversation. */
  const viewOf = async (sessionId: string, seen: Awaited<ReturnType<typeof peek>>) => {
    if (!seen.record) return undefined;
    const { entries } = await store.readTranscript(sessionId);
    return sessionView(seen.record, seen.inbox, entries, store.files?.(sessionId).snapshot);
  };
  const get = async (sessionId: string) => viewOf(sessionId, await peek(sessionId));
  const answer = async (
    sessionId: string,
    toolCallId: string,
    item: Parameters<typeof store.postInbox>[1],
  ) => {
    const view = await get(sessionId);
    if (!view?.pendingApprovals.some((p) => p.toolCallId === toolCallId)) return false;
    return (await store.postInbox(sessionId, item)) !== undefined;
  };
  return {
    async send(sessionId, text) {
      assertValidSessionId(sessionId);
      if (typeof text !== 'string')
        throw new TypeError(`send(${JSON.stringify(sessionId)}): text must be a string`);
      const trace = activeTrace(options.telemetry);
      const item = await store.postInbox(sessionId, { kind: 'message', text, ...(trace ? { trace } : {}) });
      if (!item) throw new Error(`session "${sessionId}": the message was not posted`);
      return item;
    },
    approve(sessionId, toolCallId, opts = {}) {
      return answer(sessionId, toolCallId, {
        kind: 'approval',
        toolCallId,
        approved: true,
        ...(opts.always ? { always: true } : {}),
      });
    },
    reject(sessionId, toolCallId, reason) {
      return answer(sessionId, toolCallId, {
        kind: 'approval',
        toolCallId,
        approved: false,
        ...(reason !== undefined ? { reason } : {}),
      });
    },
    async interrupt(sessionId) {
      assertValidSessionId(sessionId);
      await store.postInbox(sessionId, { kind: 'interrupt' });
    },
    get,
    async waitFor(sessionId, opts = {}) {
      const states = opts.states ?? SETTLED;
      const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
      const interval = (await watchSaves()) ? Math.max(pollMs, 1000) : pollMs;
      let wake = () => {};
      let woken = false;
      const onSave = () => {
        woken = true;
        wake();
      };
      const wakes = waiting.get(sessionId) ?? new Set<() => void>();
      waiting.set(sessionId, wakes);
      wakes.add(onSave);
      try {
        return await poll();
      } finally {
        wakes.delete(onSave);
        if (wakes.size === 0) waiting.delete(sessionId);
      }
      async function poll(): Promise<SessionView> {
        for (;;) {
          woken = false;
          const seen = await peek(sessionId);
          const { record, inbox } = seen;
          if (record && inbox === 0 && states.includes(record.state)) {
            const view = await viewOf(sessionId, seen);
            if (view) return view;
          }
          if (Date.now() >= deadline) {
            const now = record ? `${record.state} with ${inbox} input(s) waiting` : 'not saved yet';
            throw new Error(
              `session "${sessionId}" did not reach ${states.join(' or ')} in time (it is ${now})`,
            );
          }
          if (woken) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(interval, Math.max(0, deadline - Date.now())));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = () => {};
        }
      }
    },
  };
}

/** The caller's active trace context, if the telemetry has one (a hook that throws gives none). */
function activeTrace(telemetry: AgentTelemetry | undefined): TraceCarrier | undefined {
  try {
    return telemetry?.activeCarrier?.();
  } catch {
    return undefined;
  }
}
