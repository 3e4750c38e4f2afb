import type { PlanView } from '../../src/inspector/protocol.js';
import { h } from './dom.js';

const MARK: Record<PlanView['steps'][number]['status'], string> = {
  completed: '✔',
  in_progress: '▸',
  pending: '○',
};

/** The agent's plan beside the transcript: a checklist, hidden while there is none. */
export function renderPlan(el: HTMLElement, plan: PlanView | null | undefined): void {
  if (!plan || plan.steps.length === 0) {
    el.hidden = true;
    el.replaceChildren();
    return;
  }
  el.hidden = false;
  const done = plan.steps.filter((s) => s.status === 'completed').length;
  const heading = [h('h3', {}, `Plan · ${done}/${plan.steps.length} done`)];
  if (plan.explanation) heading.push(h('p', { class: 'plan-explanation' }, plan.explanation));
  el.replaceChildren(
    ...heading,
    h(
      'ol',
      { class: 'plan-steps' },
      ...plan.steps.map((s) =>
        h(
          'li',
          { class: `plan-step ${s.status}`, 'data-status': s.status },
          h('span', { class: 'mark' }, MARK[s.status] ?? '?'),
          ' ',
          s.step,
        ),
      ),
    ),
  );
}
