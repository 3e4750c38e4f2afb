import { z } from 'zod';
import { defineTool, type Tool } from './define-tool.js';

/** Where one step of the plan stands. */
export type PlanStepStatus = 'pending' | 'in_progress' | 'completed';

/** One step of the agent's plan. */
export interface PlanStep {
  step: string;
  status: PlanStepStatus;
}

/** The plan the agent keeps with `update_plan`: its steps in order, at most one in progress. */
export interface Plan {
  /** Why the plan changed, in the model's words (optional). */
  explanation?: string;
  steps: PlanStep[];
}

/** The name the plan tool is offered under. */
export const UPDATE_PLAN_TOOL = 'update_plan';

const stepSchema = z.object({
  step: z.string().trim().min(1, 'a step needs its text').max(500),
  status: z.enum(['pending', 'in_progress', 'completed']),
});

/**
 * The arguments of `update_plan`, and what a saved plan must look like: at most one step in progress
 * (the refinement's message is what the model reads when it breaks the rule).
 */
export const planSchema = z
  .object({
    explanation: z.string().max(2_000).optional(),
    steps: z.array(stepSchema).max(100),
  })
  .superRefine((plan, ctx) => {
    const running = plan.steps.flatMap((s, i) => (s.status === 'in_progress' ? [i] : []));
    if (running.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['steps'],
        message: `at most one step may be in_progress; steps ${running.join(', ')} are (mark the others pending or completed)`,
      });
    }
  });

/** The plan a valid `update_plan` call sets, as plain JSON (no unknown keys, no absent explanation). */
export function planFromArgs(args: unknown): Plan | undefined {
  const parsed = planSchema.safeParse(args);
  if (!parsed.success) return undefined;
  const { explanation, steps } = parsed.data;
  return {
    ...(explanation !== undefined && explanation.trim() !== '' ? { explanation } : {}),
    steps: steps.map(({ step, status }) => ({ step, status })),
  };
}

/** "3 steps: 1 completed, 1 in progress, 1 pending" */
export function planSummary(plan: Plan): string {
  const count = (status: PlanStepStatus) => plan.steps.filter((s) => s.status === status).length;
  const n = plan.steps.length;
  return `${n} step${n === 1 ? '' : 's'}: ${count('completed')} completed, ${count('in_progress')} in progress, ${count('pending')} pending`;
}

/**
 * `update_plan`: the agent writes down (and later ticks off) its plan. The machine keeps the plan in
 * its context (saved with the session) from each successful call's arguments, shows it to the model
 * before every call and emits `plan_updated`; the tool itself only validates and acknowledges.
 */
export const updatePlanTool: Tool = defineTool({
  name: UPDATE_PLAN_TOOL,
  description:
    'Keep a short plan for multi-step tasks. Send the whole plan each time: every step with its status ' +
    '(pending, in_progress or completed), at most one in_progress. Mark a step completed as soon as it ' +
    'is done and the next one in_progress. Skip it for simple one-step requests.',
  parameters: planSchema,
  updatesPlan: true,
  idempotent: true,
  execute: (args) => {
    const plan = planFromArgs(args);
    return plan ? `Plan updated (${planSummary(plan)}).` : 'Plan updated.';
  },
});
