import type { Message } from '../llm/message.js';
import { copyWith } from '../object-copy.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { ToolCallInfo } from './emitted-events.js';

/**
 * The tool calls of one assistant message and where each stands: the machine's one record of a batch
 * (`context.batch`). Plain JSON, never changed in place: every operation below returns a new batch.
 *
 * A call is in `calls` from the moment it is known (started early from the stream, or with the
 * assistant message), in `pending` while it waits for the user's approval, in `started` once handed
 * to a runner, and answered once `results` holds its result. A runner is a child actor running some
 * of the calls; `runners` maps its actor id to their ids.
 */
export interface ToolBatch {
  calls: ToolCallRequest[];
  /** Results received so far, by `tool_call_id`. */
  results: Record<string, ToolResult>;
  /** Ids of calls waiting for the user's approval. */
  pending: string[];
  /** Ids of calls handed to a runner. */
  started: string[];
  /** Running tool-runner actors: actor id -> the ids of the calls it runs. */
  runners: Record<string, string[]>;
}

/** No batch. Sharing it is safe: batches are never changed in place. */
export const EMPTY_BATCH: ToolBatch = { calls: [], results: {}, pending: [], started: [], runners: {} };

/** A call as events and UIs show it: its id, tool name and arguments (parsed, else the raw text). */
export function callInfo(call: ToolCallRequest): ToolCallInfo {
  return { toolCallId: call.id, name: call.name, args: call.args ?? call.argsText };
}

/** Whether a call waits for the user: its tool or the policy asks, and the user has not allowed the tool for the session. */
export function needsApproval(call: ToolCallRequest, alwaysAllowed: readonly string[]): boolean {
  return call.needsApproval && !alwaysAllowed.includes(call.name);
}

/**
 * The batch once the assistant message's calls are known. Calls already started from the stream keep
 * their runners and results; the others wait for approval or are ready to start.
 */
export function receiveCalls(
  batch: ToolBatch,
  calls: ToolCallRequest[],
  alwaysAllowed: readonly string[],
): ToolBatch {
  const results: Record<string, ToolResult> = {};
  for (const call of calls) {
    const result = batch.results[call.id];
    if (result) results[call.id] = result;
  }
  const pending = calls
    .filter((c) => !batch.started.includes(c.id) && needsApproval(c, alwaysAllowed))
    .map((c) => c.id);
  return { ...batch, calls, results, pending };
}

/** The calls that can start now: known, not started, not waiting for approval. */
export function readyCalls(batch: ToolBatch): ToolCallRequest[] {
  return batch.calls.filter((c) => !batch.started.includes(c.id) && !batch.pending.includes(c.id));
}

/**
 * The actor id for a new runner: `tools:<n>`, n the smallest number that no runner of the batch and no
 * live child of the agent (`children`: a runner that reported every result but has not ended yet, or
 * one of an abandoned batch) holds. The ids come from a small set on purpose: a runner's done event is
 * typed by its id, and XState memoizes the transitions of every event type it sees on each state node
 * of the machine, which every agent of the process shares, for the life of the process. Ids named
 * after call ids (unique on real model servers) added entries for every batch ever run.
 */
export function runnerIdFor(batch: ToolBatch, children: Readonly<Record<string, unknown>>): string {
  for (let n = 0; ; n++) {
    const id = `tools:${n}`;
    if (batch.runners[id] === undefined && children[id] === undefined) return id;
  }
}

/** The batch with `calls` handed to the runner `runnerId` (calls not yet in the batch are added: started early). */
export function startRun(batch: ToolBatch, calls: ToolCallRequest[], runnerId: string): ToolBatch {
  const added = calls.filter((c) => !batch.calls.some((k) => k.id === c.id));
  const ids = calls.map((c) => c.id);
  return {
    ...batch,
    calls: added.length > 0 ? [...batch.calls, ...added] : batch.calls,
    started: [...batch.started, ...ids],
    runners: copyWith(batch.runners, { [runnerId]: ids }),
  };
}

/** The batch with the user's answer to a pending call: approved (to be started), or declined with `result`. */
export function answerApproval(batch: ToolBatch, toolCallId: string, declined?: ToolResult): ToolBatch {
  const pending = batch.pending.filter((id) => id !== toolCallId);
  if (!declined) return { ...batch, pending };
  return { ...batch, pending, results: copyWith(batch.results, { [toolCallId]: declined }) };
}

/**
 * Takes the results among `incoming` that answer a started, unanswered call of the batch; results of
 * calls no longer current (a discarded stream, an abandoned batch) are dropped. `ended` names a runner
 * that is done: it leaves `runners`.
 */
export function acceptResults(
  batch: ToolBatch,
  incoming: readonly ToolResult[],
  ended?: string,
): { batch: ToolBatch; accepted: ToolResult[] } {
  const accepted = incoming.filter(
    (r) => batch.started.includes(r.toolCallId) && batch.results[r.toolCallId] === undefined,
  );
  const runners =
    ended !== undefined && ended in batch.runners ? without(batch.runners, ended) : batch.runners;
  if (accepted.length === 0)
    return { batch: runners === batch.runners ? batch : { ...batch, runners }, accepted };
  const added: Record<string, ToolResult> = {};
  for (const result of accepted) added[result.toolCallId] = result;
  return { batch: { ...batch, results: copyWith(batch.results, added), runners }, accepted };
}

/** The calls of a runner that failed, each answered with an error naming the failure. */
export function runnerFailure(batch: ToolBatch, runnerId: string, error: unknown): ToolResult[] {
  const message = error instanceof Error ? error.message : String(error);
  return (batch.runners[runnerId] ?? []).flatMap((id) => {
    const call = batch.calls.find((c) => c.id === id);
    return call ? [errorResult(call, `Error: the tool runner failed: ${message}`)] : [];
  });
}

/** A copy of `record` without `key` (a `delete` would turn the copy into a slow dictionary object). */
function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const kept: Record<string, T> = {};
  for (const k in record) if (k !== key) kept[k] = record[k]!;
  return kept;
}

/** A runner's done or error event, as the machine receives it. */
export interface RunnerEvent {
  type: string;
  actorId?: string;
  output?: unknown;
  error?: unknown;
}

/** The runner a done or error event comes from, and the results it brings (an error result per call when it failed). */
export function runnerResults(batch: ToolBatch, ev: RunnerEvent): { runner: string; results: ToolResult[] } {
  const runner = ev.actorId ?? '';
  if (ev.type.startsWith('xstate.error.actor.'))
    return { runner, results: runnerFailure(batch, runner, ev.error) };
  return { runner, results: Array.isArray(ev.output) ? (ev.output as ToolResult[]) : [] };
}

/**
 * Whether a runner's done event completes the batch with no turn-ending call in it: the common end of
 * a batch, which the machine records and appends in one step.
 */
export function runnerClosesBatch(batch: ToolBatch, ev: RunnerEvent): boolean {
  if (!ev.type.startsWith('xstate.done.actor.') || !Array.isArray(ev.output)) return false;
  const runs = batch.runners[ev.actorId ?? ''];
  if (!runs) return false;
  const output = ev.output as ToolResult[];
  // Every call is answered, by the batch or by this runner, and none ends the turn.
  return batch.calls.every((call) => {
    const result =
      batch.results[call.id] ??
      (runs.includes(call.id) ? output.find((r) => r.toolCallId === call.id) : undefined);
    return result !== undefined && !(call.loopBreaking && !result.isError);
  });
}

/** An error result made for a call that did not run (or whose runner failed). */
export function errorResult(call: ToolCallRequest, content: string): ToolResult {
  return { toolCallId: call.id, name: call.name, content, isError: true, durationMs: 0 };
}

/** Whether every call of the batch has its result. */
export function isComplete(batch: ToolBatch): boolean {
  return batch.calls.length > 0 && batch.calls.every((call) => batch.results[call.id] !== undefined);
}

/** The loop-breaking call (task_completion, ask_question, ...) that succeeded, if any. */
export function loopBreaker(batch: ToolBatch): ToolCallRequest | undefined {
  return batch.calls.find((call) => call.loopBreaking && batch.results[call.id]?.isError === false);
}

/** The results in call order (the batch must be complete). */
export function orderedResults(batch: ToolBatch): ToolResult[] {
  return batch.calls.map((c) => batch.results[c.id]!);
}

/** The `role: 'tool'` message of a result. */
export function toolMessage(result: ToolResult): Message {
  return { role: 'tool', tool_call_id: result.toolCallId, content: result.content };
}

/**
 * One tool message for every call of the batch, in call order: its result, or `fallback` for a call
 * left unanswered (an interrupt, an error, a cut-off reply). Every call gets exactly one answer.
 */
export function answerAll(batch: ToolBatch, fallback: string): Message[] {
  return batch.calls.map((call) => toolMessage(batch.results[call.id] ?? errorResult(call, fallback)));
}

/** The calls waiting for the user's approval, as events and UIs show them. */
export function pendingApprovals(batch: Pick<ToolBatch, 'calls' | 'pending'>): ToolCallInfo[] {
  return batch.calls.filter((c) => batch.pending.includes(c.id)).map(callInfo);
}

/** The ids of the running runner actors. */
export function runnerIds(batch: ToolBatch): string[] {
  return Object.keys(batch.runners);
}
