import type { Agent } from '../agent/agent.js';
import { isRestState } from '../machines/agent-states.js';

/**
 * Whether the agent rests with nothing running: a rest state, and in WaitingApproval no call of the
 * batch still running (those that need no approval run meanwhile; a worker must not let the session
 * go while they do).
 */
export function isSettled(agent: Agent<unknown>): boolean {
  const snapshot = agent.actor.getSnapshot();
  if (snapshot.status !== 'active' || !isRestState(snapshot.value)) return false;
  if (snapshot.value !== 'WaitingApproval') return true;
  const { started, results } = snapshot.context.batch;
  return started.every((id) => results[id] !== undefined);
}

/**
 * Resolves once the agent is settled ({@link isSettled}) and its writes are durable. `whileBusy` is
 * called every `pollMs` until then (the worker looks for interrupts in the inbox).
 */
export function untilSettled(agent: Agent<unknown>, pollMs: number, whileBusy: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done || !isSettled(agent)) return;
      done = true;
      sub.unsubscribe();
      clearInterval(timer);
      void agent.flush().then(() => {
        // Writes of the rest point may have moved the machine on (a failed write ends in Error).
        if (isSettled(agent)) resolve();
        else void untilSettled(agent, pollMs, whileBusy).then(resolve);
      });
    };
    const sub = agent.actor.subscribe({ next: () => queueMicrotask(finish), error: () => finish() });
    const timer = setInterval(() => {
      if (agent.actor.getSnapshot().status !== 'active') {
        done = true;
        sub.unsubscribe();
        clearInterval(timer);
        resolve();
        return;
      }
      whileBusy();
      finish();
    }, pollMs);
    finish();
  });
}
