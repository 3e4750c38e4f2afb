import type pc from 'picocolors';
import type { Plan } from '../../tools/update-plan-tool.js';

type Colors = ReturnType<typeof pc.createColors>;

/**
 * The plan as a checklist for the terminal: a heading with the count done, the explanation (if any),
 * then one line per step, `✔` done, `▸` in progress, `○` pending. The text must already be
 * terminal-safe (the printers clean every event first).
 */
export function planChecklist(plan: Plan, c: Colors): string[] {
  const done = plan.steps.filter((s) => s.status === 'completed').length;
  const lines = [c.bold(`Plan · ${done}/${plan.steps.length} done`)];
  if (plan.explanation) lines.push(c.dim(`  ${plan.explanation}`));
  for (const { step, status } of plan.steps) {
    if (status === 'completed') lines.push(`  ${c.green('✔')} ${c.dim(step)}`);
    else if (status === 'in_progress') lines.push(`  ${c.cyan('▸')} ${c.bold(step)}`);
    else lines.push(`  ${c.dim('○')} ${step}`);
  }
  return lines;
}
