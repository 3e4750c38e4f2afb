import type { ToolResult } from '../tools/tool-call.js';
import { type Plan, planFromArgs } from '../tools/update-plan-tool.js';
import type { AgentContext } from './agent-context.js';
import type { ToolBatch } from './tool-batch.js';

/**
 * The plan that results just accepted set: the arguments of the last successful `update_plan` call
 * among them (the tool validated them before it answered). Undefined when none of them sets one.
 * Pure: the plan follows from the calls and their results, so a replayed transcript sets it again.
 */
export function planFromResults(batch: ToolBatch, accepted: readonly ToolResult[]): Plan | undefined {
  let plan: Plan | undefined;
  for (const result of accepted) {
    if (result.isError) continue;
    const call = batch.calls.find((c) => c.id === result.toolCallId);
    if (!call?.updatesPlan) continue;
    plan = planFromArgs(call.args) ?? plan;
  }
  return plan;
}

/** The context fields and the event payload for a plan change, or nothing when there is none. */
export function planChange(
  context: Pick<AgentContext, 'batch'>,
  accepted: readonly ToolResult[],
): { fields: { plan?: Plan }; updated: Plan | undefined } {
  const plan = planFromResults(context.batch, accepted);
  return { fields: plan ? { plan } : {}, updated: plan };
}
