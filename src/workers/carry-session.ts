import { type Agent, createAgent } from '../agent/agent.js';
import type { AgentOptions } from '../agent/agent-options.js';
import { isBusyState } from '../machines/agent-states.js';
import { appliedInboxSeqs, type InboxItem } from '../session/session-inbox.js';
import type { SessionLease } from '../session/session-lease.js';
import type { SessionRecord } from '../session/session-store.js';
import type { TranscriptEntry } from '../session/transcript.js';
import { currentEntries } from '../session/transcript-replay.js';
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
  const record = await store.load(id);
  const agentOptions = await options.agent(record);
  const agent = createAgent({ ...agentOptions, store, session: id, lease, leaseMs: options.leaseMs });
  try {
    await agent.ready();
    const entries = currentEntries((await store.readTranscript(id)).entries);
    const applied = appliedInboxSeqs(entries);
    if (agent.state === 'Interrupted' && !interruptedByUser(entries)) {
      // An owner before died mid-turn (maybe twice): go on with the turn as the user would with /continue.
      void agent.resume().catch(() => {});
    }
    await settle(agent, options);
    while (!options.stopping()) {
      const items = await store.readInbox(id);
      if (items.length === 0) break;
      const done: number[] = [];
      for (const item of items) {
        if (!applied.has(item.seq)) {
          apply(agent, item);
          applied.add(item.seq);
          await settle(agent, options);
        }
        done.push(item.seq);
        if (options.stopping()) break;
      }
      await store.completeInbox(id, done, { lease });
    }
    return agent.state;
  } finally {
    agent.stop();
  }
}

/**
 * Whether the last turn was stopped by an interrupt (its `interrupted` event comes after the last user
 * message), rather than cut off by a crash (a restore rebuilt it and no interrupt was recorded).
 */
function interruptedByUser(entries: readonly TranscriptEntry[]): boolean {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'event' && e.event === 'interrupted') return true;
    if (e.kind === 'message' && e.message.role === 'user') return false;
  }
  return false;
}

/** Waits for the agent to settle, applying interrupts posted meanwhile (looked for when woken, and every `pollMs`). */
function settle(agent: Agent<unknown>, options: CarryOptions): Promise<void> {
  let looking = false;
  const look = () => {
    if (looking || !isBusyState(agent.state)) return;
    looking = true;
    void options.store
      .readInbox(options.lease.sessionId)
      .then((items) => {
        if (items.some((i) => i.kind === 'interrupt'))
          agent.interrupt('interrupted through the session inbox');
      })
      .catch(() => {})
      .finally(() => {
        looking = false;
      });
  };
  const off = options.onPosted?.(look);
  return untilSettled(agent, options.pollMs, look).finally(() => off?.());
}

/** Applies one inbox item to a settled agent (what does not apply, such as an answer to a call no longer pending, is a no-op). */
function apply(agent: Agent<unknown>, item: InboxItem): void {
  if (item.kind === 'message') {
    // A message while approvals wait ends that turn first, as typing a new message in the chat does.
    if (agent.state === 'WaitingApproval') agent.interrupt('a new message arrived');
    if (isBusyState(agent.state)) return;
    void agent.send(item.text, { inbox: item.seq }).catch(() => {});
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
