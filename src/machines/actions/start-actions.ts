import { type AnyActorRef, enqueueActions, spawnChild } from 'xstate';
import { workCounts } from '../../work-counters.js';
import { effectsOf, type InitializeOutput } from '../agent-effects.js';
import type { TerminateReason } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import { enteredState } from './state-actions.js';

// The machine's start-up (Initializing). Only an agent with an `initialize` effect runs the
// `initialize` actor; any other leaves Initializing in one step of its own, with no actor made.

/** The `initialize` actor's id among the agent actor's children (its done event names it). */
const INITIALIZE_ID = 'initialize';

/**
 * Asks the agent actor, a microtask from now, to start up (INITIALIZE): after whoever created it has
 * added its listeners (XState decides the initial state's actions, `state_change` included, inside
 * `createActor`, before anyone can listen), and with its effects bound, so that it can say whether
 * an `initialize` effect is there. Nothing is sent to an actor stopped or past Initializing meanwhile.
 */
export function startUpSoon(agent: AnyActorRef): void {
  queueMicrotask(() => {
    const snapshot = agent.getSnapshot();
    if (snapshot.status !== 'active' || snapshot.value !== 'Initializing') return;
    agent.send({ type: 'INITIALIZE', effect: effectsOf(agent)?.initialize !== undefined });
  });
}

/**
 * Whether an actor restored from `snapshot` must be asked to start up: a snapshot saved in
 * Initializing before its start-up began (no `initialize` actor among its children). A restored
 * actor does not run Initializing's entry again; one saved while its `initialize` actor ran restores
 * that actor (XState starts it again), whose end moves the machine on.
 */
export function startUpPending(snapshot: { value: unknown; children: Record<string, unknown> }): boolean {
  return snapshot.value === 'Initializing' && snapshot.children[INITIALIZE_ID] === undefined;
}

/** Initializing's entry, run when the actor starts: the start-up is asked for ({@link startUpSoon}). */
export const startUp = machineSetup.createAction(({ self }) => startUpSoon(self));

/** INITIALIZE with an effect: the `initialize` actor runs it (its end or failure leaves Initializing). */
export const runInitialize = machineSetup.createAction(
  spawnChild('initialize', { id: INITIALIZE_ID, input: ({ context }) => ({ sessionId: context.sessionId }) }),
);

/**
 * Initialization is over (INITIALIZE without an effect, or the `initialize` actor's output): its
 * messages added to the conversation, and entering AwaitingInput, in one context update (AwaitingInput's
 * entry then has nothing to do). Without messages the conversation is not copied. A spawned actor
 * stays among the snapshot's children (and in every saved snapshot) until stopped: the ended one is.
 */
export const finishInitializing = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    const output = (ev as { output?: InitializeOutput }).output;
    const added = output?.messages ?? [];
    if (ev.type !== 'INITIALIZE') enqueue.stopChild(INITIALIZE_ID);
    workCounts.contextUpdates++;
    enqueue.assign({
      ...(added.length > 0 ? { messages: context.messages.concat(added) } : {}),
      initialized: true,
      ...enteredState(enqueue as never, self, context, 'AwaitingInput'),
    });
  }),
);

/** The `initialize` effect failed: the machine rests in Error, never initialized (no message is taken). */
export const failInitializing = machineSetup.createAction(
  enqueueActions(({ enqueue, event: ev }) => {
    const error = (ev as { error?: unknown }).error;
    enqueue.stopChild(INITIALIZE_ID);
    enqueue.assign({
      error: { message: error instanceof Error ? error.message : String(error), code: 'init_failed' },
      terminateReason: 'error' as TerminateReason,
    });
  }),
);
