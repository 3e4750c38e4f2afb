import { randomUUID } from 'node:crypto';
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ToolCallInfo } from '../../machines/emitted-events.js';

/** The `type` of the data part that asks for one approval in an `input-required` status message. */
export const APPROVAL_REQUEST = 'approval_request';

/** A message's JSON (A2A 1.0) from the agent. */
export function agentMessageJson(
  contextId: string,
  taskId: string,
  parts: Record<string, unknown>[],
): Record<string, unknown> {
  return { messageId: `msg-${randomUUID()}`, contextId, taskId, role: 'ROLE_AGENT', parts };
}

/** A text part's JSON. */
export function textPart(text: string): Record<string, unknown> {
  return { text, mediaType: 'text/plain' };
}

/**
 * The data part asking for one call's approval: the call, its arguments, and how to answer (send a
 * message on the task with a data part `{ toolCallId, approved, reason? }`).
 */
export function approvalPart(call: ToolCallInfo): Record<string, unknown> {
  return {
    data: {
      type: APPROVAL_REQUEST,
      toolCallId: call.toolCallId,
      toolName: call.name,
      args: call.args,
      answer: { toolCallId: call.toolCallId, approved: 'boolean', reason: 'string (optional)' },
    },
    mediaType: 'application/json',
  };
}

/** The text of a message's text parts, joined by blank lines. */
export function messageText(message: Message): string {
  return message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : undefined))
    .filter((text): text is string => text !== undefined)
    .join('\n\n');
}

/** One approval answer read from a message. */
export interface ApprovalReply {
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/**
 * The approval answers a message carries for the pending calls: data parts `{ toolCallId, approved,
 * reason? }`, or one `{ approved, reason? }` for every pending call. Without data parts, a text `yes` /
 * `approve` approves all and anything else declines all with the text as the reason. An answer naming
 * a call that is not pending, or one call twice, is refused naming it (nothing is applied).
 */
export function approvalReplies(message: Message, pending: readonly ToolCallInfo[]): ApprovalReply[] {
  const data = message.parts.flatMap((part) =>
    part.content?.$case === 'data' && part.content.value && typeof part.content.value === 'object'
      ? [part.content.value as Record<string, unknown>]
      : [],
  );
  const open = new Set(pending.map((call) => call.toolCallId));
  if (data.length === 0) {
    const text = messageText(message).trim();
    const approved = /^(y|yes|approve|approved|ok)\.?$/i.test(text);
    return pending.map((call) => ({
      toolCallId: call.toolCallId,
      approved,
      ...(approved ? {} : { reason: text || 'declined' }),
    }));
  }
  const replies: ApprovalReply[] = [];
  for (const [i, value] of data.entries()) {
    if (typeof value.approved !== 'boolean') {
      throw new RequestMalformedError(`message.parts data ${i}: "approved" must be a boolean`);
    }
    const reason = typeof value.reason === 'string' ? { reason: value.reason } : {};
    if (value.toolCallId === undefined) {
      for (const call of pending)
        replies.push({ toolCallId: call.toolCallId, approved: value.approved, ...reason });
      continue;
    }
    if (typeof value.toolCallId !== 'string' || !open.has(value.toolCallId)) {
      throw new RequestMalformedError(
        `message.parts data ${i}: tool call ${JSON.stringify(value.toolCallId)} is not waiting for approval on this task`,
      );
    }
    if (replies.some((r) => r.toolCallId === value.toolCallId)) {
      throw new RequestMalformedError(
        `message.parts data ${i}: tool call "${value.toolCallId}" is answered twice`,
      );
    }
    replies.push({ toolCallId: value.toolCallId, approved: value.approved, ...reason });
  }
  return replies;
}
