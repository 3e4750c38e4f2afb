import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** A call waiting for approval, as the client is asked about it (its arguments redacted). */
export interface CallToAsk {
  toolCallId: string;
  name: string;
  args: unknown;
}

/** The answer an elicitation gave: approve, or reject with the reason the model is told. */
export type ApprovalDecision = { approved: true } | { approved: false; reason: string };

/** The most characters of a call's arguments an elicitation message shows (the rest is cut, saying so). */
const SHOWN_ARGS = 4000;

/**
 * The `elicitation/create` form asking whether `agent` may run `call`: the message names the tool and
 * shows its arguments; the form has `decision` (approve / reject) and an optional `reason`. The call is
 * also in `_meta["agentloop/toolCall"]` for clients that show it their own way.
 */
export function approvalElicitation(agent: string, call: CallToAsk): ElicitRequestFormParams {
  let args = JSON.stringify(call.args ?? {}, null, 2) ?? 'null';
  if (args.length > SHOWN_ARGS)
    args = `${args.slice(0, SHOWN_ARGS)}\n… (${args.length - SHOWN_ARGS} more characters)`;
  return {
    mode: 'form',
    message: `The agent "${agent}" asks to run the tool "${call.name}" with these arguments:\n${args}\nApprove or reject the call.`,
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: `Run ${call.name}?`,
          enum: ['approve', 'reject'],
          enumNames: ['Approve', 'Reject'],
        },
        reason: {
          type: 'string',
          title: 'Reason',
          description: 'Why not (told to the agent when you reject)',
        },
      },
      required: ['decision'],
    },
    _meta: { 'agentloop/toolCall': { toolCallId: call.toolCallId, name: call.name, args: call.args } },
  };
}

/**
 * What the client's answer means: `accept` with `decision: 'approve'` approves; `accept` with
 * `reject`, `decline` and `cancel` reject (with the user's reason when given). Nothing but an explicit
 * approve runs the call.
 */
export function decisionOf(result: ElicitResult): ApprovalDecision {
  const content = result.content ?? {};
  const reason =
    typeof content.reason === 'string' && content.reason.trim() ? content.reason.trim() : undefined;
  if (result.action === 'accept' && content.decision === 'approve') return { approved: true };
  if (result.action === 'accept') return { approved: false, reason: reason ?? 'rejected in the MCP client' };
  if (result.action === 'decline') return { approved: false, reason: reason ?? 'declined in the MCP client' };
  return { approved: false, reason: 'the approval was dismissed in the MCP client' };
}
