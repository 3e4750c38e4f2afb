import type { AgentContext } from '../machines/agent-context.js';
import { type AgentStateName, isBusyState } from '../machines/agent-states.js';
import { sessionBudgetSpent } from '../machines/turn-limits.js';

/**
 * Why `send()` may not start a turn in `state`, or `null`: start-up failed, a turn is running, or the
 * session has spent its cost budget (`limits.maxSessionCostUsd`: another model call would pass it).
 */
export function sendRefusal(state: AgentStateName, context: AgentContext): string | null {
  if (state === 'Error' && !context.initialized)
    return `agent failed to initialize: ${context.error?.message ?? 'unknown error'}`;
  if (isBusyState(state)) return `agent is busy (${state}); wait for the turn to end or interrupt it`;
  return sessionBudgetSpent(context);
}
