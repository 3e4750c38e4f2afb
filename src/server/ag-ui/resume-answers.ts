import type { ResumeEntry } from '@ag-ui/core';
import type { ToolCallInfo } from '../../machines/emitted-events.js';
import { HttpError } from '../http-error.js';
import { approvalInterruptId } from './run-events.js';

/** One approval answer taken from a `resume[]` entry. */
export interface ApprovalAnswer {
  toolCallId: string;
  approved: boolean;
  always: boolean;
  reason?: string;
}

/**
 * The approval answers in a run's `resume[]`, checked against the calls the session waits on. An entry
 * for an interrupt that is not open (unknown, or answered already) is refused by id (409), as is a
 * second entry for one interrupt, and one for an interrupt that has `expired`: nothing is applied then. `cancelled` declines the call.
 */
export function answersFor(
  pending: readonly ToolCallInfo[],
  resume: readonly ResumeEntry[],
  expired: (interruptId: string) => boolean = () => false,
): ApprovalAnswer[] {
  const open = new Map(pending.map((call) => [approvalInterruptId(call.toolCallId), call]));
  const seen = new Set<string>();
  return resume.map((entry) => {
    const call = open.get(entry.interruptId);
    if (!call) {
      throw new HttpError(
        409,
        'interrupt_not_open',
        `interrupt "${entry.interruptId}" is not open on this thread (unknown, or answered already)`,
      );
    }
    if (expired(entry.interruptId)) {
      throw new HttpError(
        409,
        'interrupt_expired',
        `interrupt "${entry.interruptId}" has expired (the approval timeout passed); send a new message`,
      );
    }
    if (seen.has(entry.interruptId)) {
      throw new HttpError(400, 'bad_input', `resume[] answers interrupt "${entry.interruptId}" twice`);
    }
    seen.add(entry.interruptId);
    if (entry.status === 'cancelled')
      return { toolCallId: call.toolCallId, approved: false, always: false, reason: 'cancelled' };
    const payload = entry.payload as { approved?: unknown; reason?: unknown; always?: unknown } | undefined;
    if (!payload || typeof payload !== 'object' || typeof payload.approved !== 'boolean') {
      throw new HttpError(
        400,
        'bad_input',
        `resume[] entry for "${entry.interruptId}": payload.approved must be a boolean`,
      );
    }
    return {
      toolCallId: call.toolCallId,
      approved: payload.approved,
      always: payload.always === true,
      ...(typeof payload.reason === 'string' ? { reason: payload.reason } : {}),
    };
  });
}
