import type { Agent } from '../agent/agent.js';
import type { ToolRunHooks } from '../machines/actors/run-tools.js';
import type { RecordedApproval } from '../session/restore-plan.js';
import { type ToolCallStatus, type TranscriptEntry, toolCallLedger } from '../session/transcript.js';
import { APPROVAL_EVENT } from '../session/transcript-replay.js';
import type { ResponderLog } from './cassette-responder.js';
import { shownValue } from './recorded-request.js';
import type { ReplayApprovalAnswer, ReplayOptions, ReplayTools } from './replay-options.js';
/**
 * The tool hooks of a replay. `recorded`: every call gets its recorded result (by the recorded
 * tool-call id) and nothing runs; a call without one gets an error result and a warning. `live`: the
 * tools run and the first result that differs from the recorded one is the divergence. Once the
 * replay has gone live (`log.liveFrom`), every tool runs and nothing is compared.
 */
export function replayToolHooks(
  entries: readonly TranscriptEntry[],
  mode: ReplayTools,
  log: ResponderLog,
): ToolRunHooks {
  const ledger = toolCallLedger(entries);
  if (mode === 'recorded') {
    return {
      beforeRun: async (call) => {
        if (log.liveFrom) return undefined; // past the recording: the tool runs
        const status = ledger.get(call.id);
        if (status?.status === 'completed') {
          return {
            toolCallId: call.id,
            name: call.name,
            content: status.result,
            isError: status.isError,
            durationMs: 0,
          };
        }
        log.warnings.push(`tool call ${call.id} (${call.name}): no recorded result; answered with an error`);
        const content = `agentloop replay: the recording has no result for tool call ${call.id} (${call.name})`;
        return { toolCallId: call.id, name: call.name, content, isError: true, durationMs: 0 };
      },
    };
  }
  return {
    afterRun: (result, call) => {
      if (log.liveFrom) return; // past the recording: nothing to compare with
      const status: ToolCallStatus | undefined = ledger.get(call.id);
      const recorded = status?.status === 'completed' ? status.result : undefined;
      if (recorded === result.content) return;
      const message =
        `tool call ${call.id} (${call.name}) after model call ${log.answered}: ` +
        `recorded result ${shownValue(recorded)}, now ${shownValue(result.content)}`;
      if (log.divergence) return void log.warnings.push(message);
      log.divergence = {
        kind: 'tool_result',
        step: log.answered,
        toolCallId: call.id,
        name: call.name,
        recorded,
        actual: result.content,
        message,
      };
    },
  };
}

/**
 * Answers the agent's approval requests during a replay: as the recording answered them (by
 * tool-call id; a call the recording ran without being asked is approved, one it neither answered
 * nor ran is declined, each with a warning), or by the caller's function.
 */
export function answerApprovals(
  agent: Agent,
  entries: readonly TranscriptEntry[],
  approve: ReplayOptions['approve'],
  log: ResponderLog,
): () => void {
  const recorded = recordedApprovals(entries);
  const ran = toolCallLedger(entries);
  const decide = async (call: { toolCallId: string; name: string; args: unknown }) => {
    if (typeof approve === 'function') return answerOf(await approve(call));
    const answer = recorded.get(call.toolCallId);
    if (answer) return answer;
    const didRun = ran.has(call.toolCallId);
    if (log.liveFrom && !didRun) {
      log.warnings.push(
        `tool call ${call.toolCallId} (${call.name}): asked for approval in the live part; declined (pass approve to answer)`,
      );
      return {
        toolCallId: call.toolCallId,
        approved: false,
        reason: 'nobody to approve it during the replay',
      };
    }
    log.warnings.push(
      `tool call ${call.toolCallId} (${call.name}): the recording has no approval answer; ${didRun ? 'approved, as it ran' : 'declined, as it did not run'}`,
    );
    return didRun
      ? { toolCallId: call.toolCallId, approved: true }
      : { toolCallId: call.toolCallId, approved: false, reason: 'not approved in the recording' };
  };
  return agent.on('approval_requested', ({ pending }) => {
    for (const call of pending) {
      void decide(call)
        .then((answer) => {
          if (answer.approved) agent.approve(call.toolCallId, answer.always ? { always: true } : {});
          else agent.reject(call.toolCallId, answer.reason);
        })
        .catch((error: unknown) => {
          log.warnings.push(
            `tool call ${call.toolCallId}: the approval could not be answered (${(error as Error).message})`,
          );
          agent.interrupt('replay approval failed');
        });
    }
  });
}

function answerOf(answer: ReplayApprovalAnswer): Omit<RecordedApproval, 'toolCallId'> {
  if (typeof answer === 'boolean') return { approved: answer };
  return answer.reason === undefined
    ? { approved: answer.approved }
    : { approved: answer.approved, reason: answer.reason };
}

/** The recording's approval answers by tool-call id (the first answer of a call wins). */
export function recordedApprovals(entries: readonly TranscriptEntry[]): Map<string, RecordedApproval> {
  const answers = new Map<string, RecordedApproval>();
  for (const entry of entries) {
    if (entry.kind !== 'event' || entry.event !== APPROVAL_EVENT) continue;
    const data = entry.data as Partial<RecordedApproval> | null | undefined;
    if (typeof data?.toolCallId !== 'string' || typeof data.approved !== 'boolean') continue;
    if (answers.has(data.toolCallId)) continue;
    answers.set(data.toolCallId, {
      toolCallId: data.toolCallId,
      approved: data.approved,
      ...(typeof data.reason === 'string' ? { reason: data.reason } : {}),
      ...(data.always === true ? { always: true } : {}),
    });
  }
  return answers;
}
