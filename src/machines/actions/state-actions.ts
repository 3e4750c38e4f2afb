import { type AnyActorRef, enqueueActions } from 'xstate';
import { workCounts } from '../../work-counters.js';
import type { AgentContext } from '../agent-context.js';
import type { AgentStateName } from '../agent-states.js';
import type { AgentEvent } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import { event, hears } from '../turn-messages.js';

/**
 * Entering a top-level state: `state_change` is emitted (for those who listen) and the context field
 * to merge into the entry's one update is returned. Entry actions that update the context anyway
 * (Thinking, WaitingApproval) call this instead of adding an update of their own: every context update
 * is a new snapshot, the largest per-step cost of the machine (bench/README.md).
 */
export function enteredState(
  enqueue: { emit(event: AgentEvent): void },
  self: AnyActorRef,
  context: AgentContext,
  state: AgentStateName,
): { lastState: AgentStateName } {
  if (hears(self, 'state_change')) {
    enqueue.emit(event(context, 'state_change', { state, previous: context.lastState }));
  }
  return { lastState: state };
}

/**
 * The entry action of a state with nothing else to update on entry (params: `{ state }`). Nothing to
 * do when the transition's own update already recorded the state (`receiveReply` with `enters`).
 */
export const enterState = machineSetup.createAction(
  // Params stay `unknown` here: XState's extend() types actions made by createAction without params.
  enqueueActions(({ enqueue, context, self }, params: unknown) => {
    const { state } = params as { state: AgentStateName };
    if (context.lastState === state) return;
    workCounts.contextUpdates++;
    enqueue.assign(enteredState(enqueue as never, self, context, state));
  }),
);
