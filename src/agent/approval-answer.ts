import type { AgentInputEvent } from '../machines/agent-events.js';
import type { ToolCallInfo } from '../machines/emitted-events.js';

/** The user's answer to one pending call: approved (with `always`, for the rest of the session) or declined. */
export interface ApprovalAnswer {
  toolCallId: string;
  approved: boolean;
  reason?: string;
  always?: boolean;
  /** The inbox item the answer came from (a worker applies it); recorded with the answer. */
  inbox?: number;
}

/** The pending call an answer is for, or an error listing the pending ids. */
export function pendingCallFor(pending: readonly ToolCallInfo[], toolCallId: string): ToolCallInfo | Error {
  const call = pending.find((c) => c.toolCallId === toolCallId);
  if (call) return call;
  const ids = pending.map((c) => c.toolCallId).join(', ') || 'none';
  return new Error(`no pending approval for tool call "${toolCallId}" (pending: ${ids})`);
}

/** The machine event that carries an answer, given at `at` (epoch ms). */
export function approvalEvent(answer: ApprovalAnswer, at: number): AgentInputEvent {
  if (answer.approved) {
    return { type: 'APPROVE', toolCallId: answer.toolCallId, at, ...(answer.always ? { always: true } : {}) };
  }
  return {
    type: 'REJECT',
    toolCallId: answer.toolCallId,
    at,
    ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
  };
}

/** An answer from `approve` / `reject` arguments, leaving out what was not given. */
export function approvalAnswer(
  toolCallId: string,
  approved: boolean,
  options: { always?: boolean; reason?: string | undefined; inbox?: number | undefined },
): ApprovalAnswer {
  return {
    toolCallId,
    approved,
    ...(options.always ? { always: true } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.inbox !== undefined ? { inbox: options.inbox } : {}),
  };
}
