import type { Message } from '../llm/message.js';
import { interruptedSnapshot, type PersistedAgentSnapshot } from '../machines/agent-snapshot.js';
import { notRunToolResult } from './conversation-repair.js';
import type { RecoveredCall, ReplayPlan, TranscriptLoss } from './restore-plan.js';
import { interruptedToolResult, type TranscriptEntryInput } from './transcript.js';

/** Set when the transcript lacks entries the record says it had (deleted, truncated or replaced). */
export function transcriptLoss(
  transcriptSeq: number,
  entries: readonly { seq: number }[],
  file: string,
): TranscriptLoss | undefined {
  const foundSeq = entries.reduce((last, e) => Math.max(last, e.seq), 0);
  if (transcriptSeq <= foundSeq) return undefined;
  return {
    status: entries.length === 0 ? 'missing' : 'truncated',
    file,
    expectedSeq: transcriptSeq,
    foundSeq,
  };
}

/**
 * The plan when the transcript lost entries the record says it had: the snapshot is all there is.
 * The agent rests in Error with a message naming the file, rather than carrying on as if nothing had
 * happened: what happened after the save (a crash mid-turn, approvals) is unknown, and the audit log
 * is gone. Nothing runs: only the transcript could say which calls of a batch in flight had finished,
 * so those with a result in the batch keep it and the others are answered interrupted or not run.
 */
export function lostTranscriptPlan(saved: PersistedAgentSnapshot, lost: TranscriptLoss): ReplayPlan {
  const { batch, messages, iteration } = saved.context;
  const savedState = String(saved.value);
  const calls: RecoveredCall[] = [];
  const append: TranscriptEntryInput[] = [];
  const answers: Message[] = [];
  // A record that refers to its conversation in the transcript may have lost the batch's message too.
  const held = new Set(
    messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [])),
  );
  for (const call of batch.calls) {
    const result = batch.results[call.id];
    const started = batch.started.includes(call.id);
    const content =
      result?.content ?? (started ? interruptedToolResult(call.name) : notRunToolResult(call.name));
    if (held.has(call.id)) answers.push({ role: 'tool', tool_call_id: call.id, content });
    calls.push({
      toolCallId: call.id,
      name: call.name,
      outcome: result ? 'recorded' : started ? 'interrupted' : 'not-run',
    });
    append.push({
      kind: 'tool_call_finished',
      toolCallId: call.id,
      name: call.name,
      result: content,
      isError: result?.isError ?? true,
      durationMs: result?.durationMs ?? 0,
    });
  }
  const what =
    lost.status === 'missing'
      ? 'is missing'
      : `ends at entry ${lost.foundSeq}, before entry ${lost.expectedSeq} the last save recorded`;
  const message =
    `The transcript ${lost.file} ${what}. The session was restored from its last save (in ${savedState}); ` +
    `what happened after that save is not known${calls.length > 0 ? ', and the tool calls that were running are reported as not finished' : ''}. ` +
    'A new transcript starts with the restored conversation; send a message (or resume) to go on.';
  const restored = answerOpenCalls([...messages, ...answers]);
  const tail = { messages: restored, newTurns: 0, iteration, alwaysAllowed: [] };
  return {
    snapshot: interruptedSnapshot(saved, tail, { message, code: 'transcript_missing' }),
    report: {
      savedState,
      state: 'Error',
      replayedMessages: 0,
      calls,
      replayedApprovals: 0,
      transcript: lost,
    },
    append,
    decisions: new Map(),
    approvals: [],
  };
}

/**
 * The conversation with every call of its last assistant message answered (not run): what is left of
 * a conversation whose transcript lost its end may stop between a call and its answer.
 */
function answerOpenCalls(messages: Message[]): Message[] {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]!.role === 'tool') last--;
  const assistant = messages[last];
  if (assistant?.role !== 'assistant' || !assistant.tool_calls?.length) return messages;
  const answered = new Set(messages.slice(last + 1).map((m) => (m.role === 'tool' ? m.tool_call_id : '')));
  const open = assistant.tool_calls.filter((c) => !answered.has(c.id));
  return [
    ...messages,
    ...open.map(
      (c): Message => ({
        role: 'tool',
        tool_call_id: c.id,
        content: notRunToolResult(c.type === 'function' ? c.function.name : 'tool'),
      }),
    ),
  ];
}
