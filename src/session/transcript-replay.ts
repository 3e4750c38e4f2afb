import type { Message } from '../llm/message.js';
import {
  interruptedSnapshot,
  type PersistedAgentSnapshot,
  upgradeSnapshot,
  withAlwaysAllowed,
} from '../machines/agent-snapshot.js';
import { type Plan, planFromArgs, UPDATE_PLAN_TOOL } from '../tools/update-plan-tool.js';
import {
  type ConversationRepair,
  notRunToolResult,
  repairConversation,
  repaired,
} from './conversation-repair.js';
import type { RecordedApproval, RecoveredCall, ReplayPlan, TranscriptLoss } from './restore-plan.js';
import {
  interruptedToolResult,
  type ResumeDecision,
  resumeDecisions,
  type TranscriptEntry,
  type TranscriptEntryInput,
} from './transcript.js';
import { lostTranscriptPlan } from './transcript-loss.js';

/** The transcript event a session writes when it starts from nothing (its first line, usually). */
export const SESSION_STARTED_EVENT = 'session_started';
/** The transcript event written when the user answers an approval request. */
export const APPROVAL_EVENT = 'approval_resolved';
/** The transcript event written when the user allows a tool for the rest of the session. */
export const ALWAYS_ALLOW_EVENT = 'always_allow';
/** The transcript event written after a restore, saying what was recovered. */
export const RESTORED_EVENT = 'session_restored';

export type { ConversationRepair, PersistedAgentSnapshot, TranscriptLoss };
export { notRunToolResult };

/**
 * The entries of the session as it is now: after its last `session_started` event. (A session whose
 * first save never landed starts again from nothing; the lines before belong to that lost start.)
 */
export function currentEntries(entries: readonly TranscriptEntry[]): TranscriptEntry[] {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind === 'event' && entry.event === SESSION_STARTED_EVENT) return entries.slice(i + 1);
  }
  return [...entries];
}

/** The conversation the transcript holds, in order. */
export function transcriptMessages(entries: readonly TranscriptEntry[]): Message[] {
  return entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
}

/**
 * Plans the restore of a saved snapshot against its transcript (entries of the current session only,
 * see {@link currentEntries}). Pure.
 *
 * - When the transcript holds no message past the snapshot, the snapshot is restored as it is. If it
 *   was saved in WaitingApproval, the calls of its batch that were still running are restarted by
 *   XState; `decisions` says for each whether to reuse its recorded result, report it interrupted, or
 *   run it. Approvals given after the save are replayed.
 * - When the transcript went further (a crash between rest points), the conversation is rebuilt from
 *   it and the agent rests in `Interrupted`, as after Ctrl+C: every call of the last assistant message
 *   gets its one result (recorded, interrupted, or not run), and nothing runs during the restore.
 *   Calls started from a stream that never completed get the assistant message they came from.
 * - With `lost` (the transcript lacks entries the record says it had: deleted or truncated), the
 *   snapshot is all there is: the agent rests in Error naming the file (see transcript-loss.ts).
 */
export function planRestore(
  persisted: PersistedAgentSnapshot,
  entries: readonly TranscriptEntry[],
  isIdempotent: (toolName: string) => boolean,
  options: { lost?: TranscriptLoss } = {},
): ReplayPlan {
  const alwaysAllowed = [
    ...new Set(
      entries.flatMap((e) =>
        e.kind === 'event' && e.event === ALWAYS_ALLOW_EVENT
          ? [String((e.data as { tool?: unknown })?.tool)]
          : [],
      ),
    ),
  ];
  const saved = withAlwaysAllowed(upgradeSnapshot(persisted), alwaysAllowed);
  if (options.lost) return lostTranscriptPlan(saved, options.lost);
  const context = saved.context;
  const { batch } = context;
  const savedState = String(saved.value);
  const recorded = transcriptMessages(entries);
  const tail = recorded.slice(context.messages.length);
  const afterLastMessage = entriesAfter(entries, (e) => e.kind === 'message');
  // Calls no message holds, neither in the transcript nor in the snapshot (which may be ahead of it).
  const holds = (id: string) => (m: Message) =>
    m.role === 'assistant' && m.tool_calls?.some((c) => c.id === id) === true;
  const orphans = startedCalls(afterLastMessage).filter(
    (s) => !recorded.some(holds(s.toolCallId)) && !context.messages.some(holds(s.toolCallId)),
  );

  if (tail.length === 0 && orphans.length === 0) {
    const plan: ReplayPlan = {
      snapshot: saved,
      report: { savedState, state: savedState, replayedMessages: 0, calls: [], replayedApprovals: 0 },
      append: [],
      decisions: new Map(),
      approvals: [],
    };
    if (savedState !== 'WaitingApproval' || batch.calls.length === 0) return plan;
    const batchIds = new Set(batch.calls.map((c) => c.id));
    const sinceBatch = batchEntries(entries, batchIds);
    // A runner restarted by the restore runs all of its calls again: those the batch had already
    // answered get their result from it, not another run.
    for (const call of batch.calls) {
      const result = batch.results[call.id];
      if (result) {
        const { content, isError } = result;
        plan.decisions.set(call.id, {
          toolCallId: call.id,
          action: 'use-recorded',
          name: call.name,
          result: content,
          isError,
        });
      }
    }
    const open = batch.calls.filter((c) => batch.results[c.id] === undefined).map((c) => c.id);
    for (const decision of resumeDecisions(sinceBatch, open, isIdempotent)) {
      plan.decisions.set(decision.toolCallId, decision);
      const name = batch.calls.find((c) => c.id === decision.toolCallId)!.name;
      if (!batch.started.includes(decision.toolCallId) && !batch.pending.includes(decision.toolCallId))
        continue;
      plan.report.calls.push({ toolCallId: decision.toolCallId, name, outcome: outcomeOf(decision) });
    }
    for (const e of sinceBatch) {
      if (e.kind !== 'event' || e.event !== APPROVAL_EVENT) continue;
      const data = e.data as RecordedApproval;
      if (!batch.pending.includes(data.toolCallId)) continue;
      plan.approvals = plan.approvals.filter((a) => a.toolCallId !== data.toolCallId);
      plan.approvals.push(data);
    }
    plan.report.replayedApprovals = plan.approvals.length;
    return plan;
  }

  // The transcript went past the snapshot: rebuild the conversation and rest in Interrupted. A gap in
  // the transcript (entries a failed write lost) is repaired, so the API accepts what is rebuilt.
  const rebuilt: Message[] = [...context.messages, ...tail];
  if (orphans.length > 0) {
    rebuilt.push({
      role: 'assistant',
      content: null,
      tool_calls: orphans.map((s) => ({
        id: s.toolCallId,
        type: 'function' as const,
        function: {
          name: s.name,
          arguments: typeof s.args === 'string' ? s.args : JSON.stringify(s.args ?? {}),
        },
      })),
    });
  }
  const fixed = repairConversation(rebuilt, entries);
  const messages = fixed.messages;
  const calls: RecoveredCall[] = [];
  const append: TranscriptEntryInput[] = [...fixed.append];
  const lastAssistant = findLastIndex(messages, (m) => m.role === 'assistant');
  const assistant = messages[lastAssistant];
  if (assistant?.role === 'assistant' && assistant.tool_calls?.length) {
    const answered = new Set(
      messages.slice(lastAssistant + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
    );
    const open = assistant.tool_calls.filter((c) => !answered.has(c.id));
    const ids = new Set(assistant.tool_calls.map((c) => c.id));
    const sinceBatch = batchEntries(entries, ids);
    const decisions = resumeDecisions(
      sinceBatch,
      open.map((c) => c.id),
      () => false,
    );
    for (const [i, decision] of decisions.entries()) {
      const call = open[i]!;
      const name = call.type === 'function' ? call.function.name : 'tool';
      let content: string;
      let outcome: RecoveredCall['outcome'];
      if (decision.action === 'use-recorded') {
        content = decision.result;
        outcome = 'recorded';
      } else {
        const started = decision.action === 'report-interrupted';
        content = started ? interruptedToolResult(name) : notRunToolResult(name);
        if (started && isIdempotent(name)) content += ' (This tool is idempotent: calling it again is safe.)';
        outcome = started ? 'interrupted' : 'not-run';
        append.push({
          kind: 'tool_call_finished',
          toolCallId: call.id,
          name,
          result: content,
          isError: true,
          durationMs: 0,
        });
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content });
      calls.push({ toolCallId: call.id, name, outcome });
    }
  }
  const newTurns = tail.filter((m) => m.role === 'user').length;
  const lastUser = findLastIndex(messages, (m) => m.role === 'user');
  const iteration =
    newTurns > 0
      ? messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length
      : context.iteration +
        messages.slice(context.messages.length).filter((m) => m.role === 'assistant').length;
  // The transcript ends in the model's final answer, past the save: the turn had finished.
  const last = messages.at(-1);
  const finalResponse =
    calls.length === 0 &&
    tail.length > 0 &&
    last?.role === 'assistant' &&
    !last.tool_calls?.length &&
    typeof last.content === 'string'
      ? last.content
      : undefined;
  const plan = planFromTail(messages.slice(context.messages.length), entries);
  const tailFields = { messages, newTurns, iteration, alwaysAllowed, ...(plan ? { plan } : {}) };
  return {
    snapshot: interruptedSnapshot(
      saved,
      finalResponse === undefined ? tailFields : { ...tailFields, finalResponse },
    ),
    report: {
      savedState,
      state: finalResponse === undefined ? 'Interrupted' : 'Completed',
      replayedMessages: tail.length + (orphans.length > 0 ? 1 : 0),
      calls,
      replayedApprovals: 0,
      ...(repaired(fixed.repair) ? { repaired: fixed.repair } : {}),
    },
    append,
    decisions: new Map(),
    approvals: [],
  };
}

/**
 * The plan the replayed messages set: the arguments of their last `update_plan` call the transcript
 * records as answered without error (what the machine would have set, had it seen the results).
 */
function planFromTail(replayed: readonly Message[], entries: readonly TranscriptEntry[]): Plan | undefined {
  const succeeded = new Set(
    entries.flatMap((e) => (e.kind === 'tool_call_finished' && !e.isError ? [e.toolCallId] : [])),
  );
  let plan: Plan | undefined;
  for (const message of replayed) {
    if (message.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) {
      if (call.type !== 'function' || call.function.name !== UPDATE_PLAN_TOOL || !succeeded.has(call.id))
        continue;
      plan = planFromArgs(parseJson(call.function.arguments)) ?? plan;
    }
  }
  return plan;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function outcomeOf(decision: ResumeDecision): RecoveredCall['outcome'] {
  if (decision.action === 'use-recorded') return 'recorded';
  if (decision.action === 'report-interrupted') return 'interrupted';
  return 'rerun';
}

/**
 * The entries of one batch: from the message before the assistant message holding the calls (calls
 * start while the reply still streams, so their lines come before the assistant message's own line).
 * Ids are unique within a session; the bound keeps a server that reuses ids from mixing batches.
 */
function batchEntries(entries: readonly TranscriptEntry[], ids: ReadonlySet<string>): TranscriptEntry[] {
  let end = entries.length;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (
      e.kind === 'message' &&
      e.message.role === 'assistant' &&
      e.message.tool_calls?.some((c) => ids.has(c.id))
    ) {
      end = i;
      break;
    }
  }
  for (let i = end - 1; i >= 0; i--) if (entries[i]!.kind === 'message') return entries.slice(i + 1);
  return [...entries];
}

/** The entries after the last one matching `isMark` (all of them when none matches). */
function entriesAfter(
  entries: readonly TranscriptEntry[],
  isMark: (entry: TranscriptEntry) => boolean,
): TranscriptEntry[] {
  for (let i = entries.length - 1; i >= 0; i--) if (isMark(entries[i]!)) return entries.slice(i + 1);
  return [...entries];
}

/** Calls started (first start line of each id), in order. */
function startedCalls(entries: readonly TranscriptEntry[]) {
  const seen = new Map<string, { toolCallId: string; name: string; args: unknown }>();
  for (const e of entries) {
    if (e.kind === 'tool_call_started' && !seen.has(e.toolCallId)) {
      seen.set(e.toolCallId, { toolCallId: e.toolCallId, name: e.name, args: e.args });
    }
  }
  return [...seen.values()];
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}
