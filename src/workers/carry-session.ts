import { type Agent, createAgent } from '../agent/agent.js';
import type { AgentOptions } from '../agent/agent-options.js';
import { isBusyState } from '../machines/agent-states.js';
import { appliedInboxSeqs, type InboxItem } from '../session/session-inbox.js';
import type { SessionLease } from '../session/session-lease.js';
import type { SessionRecord } from '../session/session-store.js';
import type { TranscriptEntry } from '../session/transcript.js';
import { validCarrier } from '../telemetry/trace-parent.js';
import { untilSettled } from './agent-settled.js';
import type { InboxSessionStore } from './session-client.js';

/** What the worker needs to carry one claimed session. */
export interface CarryOptions {
  store: InboxSessionStore;
  lease: SessionLease;
  leaseMs: number;
  pollMs: number;
  /** The agent's options for the session (model, tools, instructions); store and session are set here. */
  agent: (record: SessionRecord | undefined) => AgentOptions | Promise<AgentOptions>;
  /** Registers the listener for posts to the session's inbox (the store's wakeups); returns its removal. */
  onPosted?: (listener: () => void) => () => void;
  /** Set when the worker stops: finish the current step, then let the session go. */
  stopping: () => boolean;
}

/**
 * Carries one claimed session: restores it (today's restore rules; a turn cut off by a crash is
 * resumed), applies its inbox in order until it is empty, and completes each item once its effect
 * rested and was saved. Items the transcript says were applied (a crash before their completion) are
 * completed without applying them again. The lease is released when the agent stops. Resolves with
 * the state the session rests in.
 */
export async function carrySession(options: CarryOptions): Promise<string> {
  const { store, lease } = options;
  const id = lease.sessionId;
  const inbox = new InboxWatch(store, id, options);
  const record = await store.load(id);
  const agentOptions = await options.agent(record);
  // The record and the transcript are read once: the agent restores from this record and hands over
  // the entries it read. Without a record the agent starts the session anew (its `session_started`
  // line may still be on its way): nothing in the transcript was applied to it.
  let entries: readonly TranscriptEntry[] = [];
  const agent = createAgent({
    ...agentOptions,
    store,
    session: id,
    lease,
    leaseMs: options.leaseMs,
    sessionRecord: record ?? null,
    onSessionLoaded: (read) => {
      entries = read;
    },
  });
  try {
    await agent.ready();
    const applied = appliedInboxSeqs(entries);
    if (agent.state === 'Interrupted' && !interruptedByUser(entries)) {
      // An owner before died mid-turn (maybe twice): go on with the turn as the user would with /continue.
      void agent.resume().catch(() => {});
    }
    await inbox.settle(agent);
    while (!options.stopping()) {
      const items = await inbox.read();
      if (items.length === 0) break;
      const done: number[] = [];
      for (const [index, item] of items.entries()) {
        if (item.kind === 'event') {
          // An entry for the session's writer, which this worker is now (written again after a crash
          // before its completion: such entries say the same twice).
          await store.appendTranscript(id, [{ kind: 'event', event: item.event, data: item.data }], {
            lease,
          });
        } else if (!applied.has(item.seq)) {
          apply(agent, item);
          applied.add(item.seq);
          // An interrupt posted after this item (and read with it) stops the turn the item starts.
          await inbox.settle(
            agent,
            items.slice(index + 1).some((later) => later.kind === 'interrupt'),
          );
        }
        done.push(item.seq);
        if (options.stopping()) break;
      }
      await store.completeInbox(id, done, { lease });
    }
    return agent.state;
  } finally {
    inbox.close();
    agent.stop();
  }
}

/**
 * Whether the last turn was stopped by an interrupt (its `interrupted` event comes after the last user
 * message), rather than cut off by a crash (a restore rebuilt it and no interrupt was recorded).
 */
export function interruptedByUser(entries: readonly TranscriptEntry[]): boolean {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'event' && e.event === 'interrupted') return true;
    if (e.kind === 'message' && e.message.role === 'user') return false;
  }
  return false;
}

/**
 * The session's inbox while a worker carries it: reads, and the store's wakeups for posts to it
 * (heard from the claim on, so a post between two reads is never missed). While a turn runs, a
 * wakeup makes it look for an interrupt; the poll every `pollMs` is the fallback.
 */
class InboxWatch {
  readonly #store: InboxSessionStore;
  readonly #id: string;
  readonly #pollMs: number;
  readonly #off: (() => void) | undefined;
  /** A post was heard since the last read began (that read may not hold it). */
  #heard = false;
  /** What a wakeup does now: look for an interrupt while a turn runs. */
  #onPost: (() => void) | undefined;

  constructor(store: InboxSessionStore, id: string, options: Pick<CarryOptions, 'pollMs' | 'onPosted'>) {
    this.#store = store;
    this.#id = id;
    this.#pollMs = options.pollMs;
    this.#off = options.onPosted?.(() => {
      this.#heard = true;
      this.#onPost?.();
    });
  }

  read(): Promise<InboxItem[]> {
    this.#heard = false;
    return this.#store.readInbox(this.#id);
  }

  /**
   * Waits for the agent to settle, applying interrupts posted meanwhile (looked for when woken, and
   * every `pollMs`). With `interruptPosted` (an interrupt was read after the item just applied), the
   * turn that item starts is stopped as soon as it runs.
   */
  settle(agent: Agent<unknown>, interruptPosted = false): Promise<void> {
    // An interrupt read before the turn it stops has begun (`send` hands the message over a tick
    // later) waits for it: it applies to this settle's turn only.
    let wanted = false;
    const interrupt = () => {
      wanted = !isBusyState(agent.state);
      if (!wanted) agent.interrupt('interrupted through the session inbox');
    };
    let looking = false;
    const look = () => {
      if (looking) return;
      looking = true;
      void this.read()
        .then((items) => {
          if (items.some((i) => i.kind === 'interrupt')) interrupt();
        })
        .catch(() => {})
        .finally(() => {
          looking = false;
          // Heard during the read: the read may predate that post.
          if (this.#heard) look();
        });
    };
    const sub = agent.actor.subscribe(() => {
      if (wanted && isBusyState(agent.state)) interrupt();
    });
    this.#onPost = look;
    if (interruptPosted) interrupt();
    if (this.#heard) look();
    return untilSettled(agent, this.#pollMs, look).finally(() => {
      sub.unsubscribe();
      this.#onPost = undefined;
    });
  }

  close(): void {
    this.#off?.();
  }
}

/** Applies one inbox item to a settled agent (what does not apply, such as an answer to a call no longer pending, is a no-op). */
function apply(agent: Agent<unknown>, item: Exclude<InboxItem, { kind: 'event' }>): void {
  if (item.kind === 'message') {
    // A message while approvals wait ends that turn first, as typing a new message in the chat does.
    if (agent.state === 'WaitingApproval') agent.interrupt('a new message arrived');
    if (isBusyState(agent.state)) return;
    // Only a valid carrier passes (the item was read from a store): one that is not starts a trace of its own.
    const carrier = validCarrier(item.trace);
    const traced = carrier ? { traceParent: carrier } : {};
    void agent.send(item.text, { inbox: item.seq, ...traced }).catch(() => {});
    return;
  }
  if (item.kind === 'approval') {
    if (!agent.pendingApprovals.some((p) => p.toolCallId === item.toolCallId)) return;
    if (item.approved)
      agent.approve(item.toolCallId, { ...(item.always ? { always: true } : {}), inbox: item.seq });
    else agent.reject(item.toolCallId, item.reason, { inbox: item.seq });
    return;
  }
  if (isBusyState(agent.state)) agent.interrupt(item.reason ?? 'interrupted through the session inbox');
}
