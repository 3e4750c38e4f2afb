import type { AgentDefinition } from '../prompt/agent-definition.js';
import { Cassette } from './cassette.js';
import type { CaseOutcome } from './eval-expectations.js';
import type { EvalCase } from './eval-suite-file.js';
import { approvalDecision, EVAL_REJECT_REASON } from './live-case-run.js';
import type { ReplayApprovalAnswer, ReplayApprovalCall } from './replay-options.js';
import { replaySession } from './replay-session.js';
import { recordedApprovals } from './replay-tools.js';

/**
 * Replays a case's transcript with `replaySession`: the agent runs again against the scripted server
 * answering from the recording (`replay.match`, default strict: each request must hash to the recorded
 * one; `replay.tools`, default recorded: no tool runs). Approvals are answered as the case says, else as
 * the recording did (a call it has no answer for is approved). A divergence is the outcome's `error`
 * and the case's first miss.
 */
export async function runReplayCase(
  definition: AgentDefinition,
  evalCase: EvalCase,
): Promise<{ outcome: CaseOutcome; divergence?: string }> {
  const cassette = evalCase.cassette ?? (await Cassette.fromFile(evalCase.transcript!));
  const recorded = recordedApprovals(cassette.entries);
  const asked: string[] = [];
  const approve = (call: ReplayApprovalCall): ReplayApprovalAnswer => {
    asked.push(call.name);
    if (evalCase.approvals !== undefined) {
      return approvalDecision(evalCase.approvals, call.name) === 'approve'
        ? true
        : { approved: false, reason: EVAL_REJECT_REASON };
    }
    const answer = recorded.get(call.toolCallId);
    return answer ? { approved: answer.approved, ...(answer.reason ? { reason: answer.reason } : {}) } : true;
  };
  const replay = await replaySession(cassette, {
    agent: definition,
    approve,
    ...(evalCase.replay?.match ? { match: evalCase.replay.match } : {}),
    ...(evalCase.replay?.tools ? { tools: evalCase.replay.tools } : {}),
  });
  const { result } = replay;
  if (!result) throw new Error(`${cassette.source}: the recording has no user message to replay`);
  const divergence = replay.divergence ? `replay diverged: ${replay.divergence.message}` : undefined;
  const error = divergence ?? result.error;
  const outcome: CaseOutcome = {
    trajectory: replay.trajectory,
    approvalsAsked: asked,
    response: result.response,
    terminateReason: result.terminateReason,
    modelCalls: replay.turns.reduce((sum, t) => sum + t.result.iterations, 0),
    tokens: replay.turns.reduce((sum, t) => sum + t.result.usage.totalTokens, 0),
    ...(error ? { error } : {}),
    ...(replay.warnings.length > 0 ? { warnings: replay.warnings } : {}),
  };
  return { outcome, ...(divergence ? { divergence } : {}) };
}
