import { createAgent } from '../agent/agent.js';
import { toAgentOptions } from '../agent/agent-options.js';
import type { AgentDefinition } from '../prompt/agent-definition.js';
import { MemorySessionStore } from '../session/memory-session-store.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type { CaseOutcome } from './eval-expectations.js';
import type { EvalModel } from './eval-model.js';
import type { EvalApprovals } from './eval-suite-schema.js';
import { trajectoryOf } from './trajectory.js';

/** What a case answers when a call asks for approval: by tool name, `'*'` for any other (default approve). */
export function approvalDecision(approvals: EvalApprovals | undefined, tool: string): 'approve' | 'reject' {
  if (approvals === undefined) return 'approve';
  if (typeof approvals === 'string') return approvals;
  return approvals[tool] ?? approvals['*'] ?? 'approve';
}

/** The reason a rejected call reaches the model with. */
export const EVAL_REJECT_REASON = 'rejected by the eval case (approvals)';

/** One live run of a case: what it did, and the transcript it left (for `--record`). */
export interface LiveRun {
  outcome: CaseOutcome;
  entries: TranscriptEntry[];
}

/**
 * Runs `definition` live on `model`: a fresh session in a memory store, one turn per input message,
 * approvals answered by `approvals`. Stops at the first turn that ends in error. Never throws for what
 * the model or the tools do: that is the outcome.
 */
export async function runLiveCase(
  definition: AgentDefinition,
  model: EvalModel,
  inputs: readonly string[],
  approvals: EvalApprovals | undefined,
): Promise<LiveRun> {
  const store = new MemorySessionStore();
  const agent = createAgent(toAgentOptions(definition, {}, { ...model.options, store, session: 'eval' }));
  const asked: string[] = [];
  let modelCalls = 0;
  agent.on('model_call', () => {
    modelCalls++;
  });
  agent.on('approval_requested', ({ pending }) => {
    for (const call of pending) {
      asked.push(call.name);
      if (approvalDecision(approvals, call.name) === 'approve') agent.approve(call.toolCallId);
      else agent.reject(call.toolCallId, EVAL_REJECT_REASON);
    }
  });
  try {
    let tokens = 0;
    let result = await agent.send(inputs[0]!);
    tokens += result.usage.totalTokens;
    for (const input of inputs.slice(1)) {
      if (result.terminateReason === 'error') break;
      result = await agent.send(input);
      tokens += result.usage.totalTokens;
    }
    await agent.flush();
    const { entries } = await store.readTranscript(agent.sessionId);
    const outcome: CaseOutcome = {
      trajectory: trajectoryOf(result.messages),
      approvalsAsked: asked,
      response: result.response,
      terminateReason: result.terminateReason,
      modelCalls,
      tokens,
      ...(result.error ? { error: result.error } : {}),
    };
    return { outcome, entries };
  } finally {
    await agent.close();
  }
}
