import type { PendingApproval } from '../../src/inspector/protocol.js';
import { argumentsView } from './arguments.js';
import { h } from './dom.js';

/** What the page asks the server when a button is pressed. */
export type ApprovalDecision = { t: 'approve' } | { t: 'reject'; reason: string };

/**
 * One call waiting for approval: its name and id, its arguments one field a row (multi-line values
 * as lines), and Approve / Reject buttons (disabled when the session is not running here). `decide`
 * sends the answer; a refusal from the server is shown beside the buttons and they work again.
 */
export function approvalCard(
  p: PendingApproval,
  live: boolean,
  decide: (decision: ApprovalDecision) => Promise<{ ok: boolean; error?: string }>,
): HTMLElement {
  const approve = h(
    'button',
    { type: 'button', class: 'approve', 'data-tool-call-id': p.toolCallId },
    'Approve',
  );
  const reject = h(
    'button',
    { type: 'button', class: 'reject', 'data-tool-call-id': p.toolCallId },
    'Reject',
  );
  const note = h('span', { class: 'note' });
  const answer = async (decision: ApprovalDecision) => {
    approve.disabled = reject.disabled = true;
    note.textContent = decision.t === 'approve' ? 'approving…' : 'rejecting…';
    const ack = await decide(decision);
    if (!ack.ok) {
      note.textContent = ack.error ?? 'failed';
      approve.disabled = reject.disabled = !live;
    }
  };
  approve.disabled = reject.disabled = !live;
  approve.addEventListener('click', () => void answer({ t: 'approve' }));
  reject.addEventListener('click', () => void answer({ t: 'reject', reason: 'rejected in the inspector' }));
  return h(
    'div',
    { class: 'approval', 'data-tool-call-id': p.toolCallId },
    h('div', {}, h('code', {}, p.name), ' ', h('span', { class: 'sid' }, p.toolCallId)),
    argumentsView(p.args),
    h('div', { class: 'buttons' }, approve, reject, note),
  );
}
