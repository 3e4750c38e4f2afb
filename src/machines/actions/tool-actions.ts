import { enqueueActions } from 'xstate';
import { DEFAULTS } from '../../defaults.js';
import type { Message } from '../../llm/message.js';
import { copyWith } from '../../object-copy.js';
import type { ToolResult } from '../../tools/tool-call.js';
import { workCounts } from '../../work-counters.js';
import type { AgentContext } from '../agent-context.js';
import type { AgentEvent } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import { planChange } from '../plan-update.js';
import {
  acceptResults,
  answerApproval,
  callInfo,
  EMPTY_BATCH,
  orderedResults,
  pendingApprovals,
  runnerIds,
  runnerResults,
  startRun,
  type ToolBatch,
  toolMessage,
} from '../tool-batch.js';
import { checkLimitsAfterTools } from '../turn-limits.js';
import { event, hears, newRunnerId, runInput, startEvents } from '../turn-messages.js';
import { enteredState } from './state-actions.js';
import { enteredThinking } from './turn-actions.js';

// Actions for tool calls: dispatching batches, approvals, results as they arrive, appending them.

/** Entering WaitingApproval: the deadline clock stops (at the reply's time) and the UI is asked. */
export const requestApproval = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    const at = (ev as { output?: { at?: number } }).output?.at ?? null;
    workCounts.contextUpdates++;
    enqueue.assign({ pausedAt: at, ...enteredState(enqueue as never, self, context, 'WaitingApproval') });
    enqueue.emit(event(context, 'approval_requested', { pending: pendingApprovals(context.batch) }));
  }),
);

/** The deadline moved by the time the user took, once the last approval is answered at `at`. */
function resumedClock(context: AgentContext, batch: ToolBatch, at: number) {
  if (batch.pending.length > 0 || context.pausedAt === null) return {};
  const deadline = context.deadline === null ? null : context.deadline + Math.max(0, at - context.pausedAt);
  return { deadline, pausedAt: null };
}

/**
 * The user approved a pending call: it starts. With `always`, its tool is allowed for the rest of the
 * session, and every other pending call of that tool starts too.
 */
export const approveCall = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    if (ev.type !== 'APPROVE') return;
    const first = context.batch.calls.find((c) => c.id === ev.toolCallId)!;
    const approved = ev.always
      ? context.batch.calls.filter((c) => c.name === first.name && context.batch.pending.includes(c.id))
      : [first];
    let batch = context.batch;
    for (const call of approved) batch = answerApproval(batch, call.id);
    const runner = newRunnerId(self, batch);
    batch = startRun(batch, approved, runner);
    enqueue.spawnChild('runTools', { id: runner, input: runInput(context, approved) });
    workCounts.contextUpdates++;
    enqueue.assign({
      batch,
      ...(ev.always && !context.alwaysAllowed.includes(first.name)
        ? { alwaysAllowed: [...context.alwaysAllowed, first.name] }
        : {}),
      ...resumedClock(context, batch, ev.at),
    });
    for (const call of approved) {
      enqueue.emit(event(context, 'approval_resolved', { toolCallId: call.id, approved: true }));
    }
    for (const start of startEvents(self, context, approved)) enqueue.emit(start);
  }),
);

/** The user declined a pending call: the model is told so, in the call's result. */
export const rejectCall = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'REJECT') return;
    const call = context.batch.calls.find((c) => c.id === ev.toolCallId)!;
    const why = ev.reason ? ` Reason: ${ev.reason}` : '';
    const result: ToolResult = {
      toolCallId: call.id,
      name: call.name,
      content: `The user declined to run this ${call.name} call.${why} Do not retry it unchanged; continue without it or ask the user.`,
      isError: false,
      durationMs: 0,
    };
    const batch = answerApproval(context.batch, call.id, result);
    workCounts.contextUpdates++;
    enqueue.assign({ batch, ...resumedClock(context, batch, ev.at) });
    enqueue.emit(
      event(context, 'approval_resolved', {
        toolCallId: call.id,
        approved: false,
        ...(ev.reason ? { reason: ev.reason } : {}),
      }),
    );
    enqueue.emit(
      event(context, 'tool_call_end', { ...callInfo(call), result: result.content, durationMs: 0 }),
    );
  }),
);

/** A `tool_call_end` event per accepted result, for those who listen. */
function endEvents(self: Parameters<typeof hears>[0], context: AgentContext, results: ToolResult[]) {
  if (results.length === 0 || !hears(self, 'tool_call_end')) return [];
  return results.map((result): AgentEvent => {
    const call = context.batch.calls.find((c) => c.id === result.toolCallId);
    const info = call
      ? callInfo(call)
      : { toolCallId: result.toolCallId, name: result.name, args: undefined };
    const { durationMs, content } = result;
    return event(
      context,
      'tool_call_end',
      copyWith(info, result.isError ? { durationMs, error: content } : { durationMs, result: content }),
    );
  });
}

/** A call's result as it ends, before its runner is done (the default runner sends none for its last call). */
export const toolFinished = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    if (ev.type !== 'TOOL.FINISHED') return;
    const { batch, accepted } = acceptResults(context.batch, [ev.result]);
    if (accepted.length === 0) return;
    const plan = planChange(context, accepted);
    workCounts.contextUpdates++;
    enqueue.assign({ batch, ...plan.fields });
    for (const end of endEvents(self, context, accepted)) enqueue.emit(end);
    if (plan.updated) enqueue.emit(event(context, 'plan_updated', { plan: plan.updated }));
  }),
);

/**
 * A running call reported progress: a `tool_progress` event, for those who listen. Progress of a call
 * that is not running (answered already, or of another batch) is dropped. Nothing in the context
 * changes: progress is live feedback, not state.
 */
export const toolProgress = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    if (ev.type !== 'TOOL.PROGRESS') return;
    const { batch } = context;
    if (!batch.started.includes(ev.toolCallId) || ev.toolCallId in batch.results) return;
    if (!hears(self, 'tool_progress')) return;
    const { type: _type, ...report } = ev;
    enqueue.emit(event(context, 'tool_progress', report));
  }),
);

/**
 * A runner's done or error event. The done event's output (every result of the runner) records the
 * results not yet recorded: the runner sends no `TOOL.FINISHED` for the call that finishes last, so a
 * one-call batch costs one machine step less and ExecutingTool's `always` can leave in this step. A
 * runner that failed (a custom runner; the default one never rejects) gives its unanswered calls an
 * error result. Either way the runner leaves the batch.
 */
export const runnerDone = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    const { runner, results } = runnerResults(context.batch, ev);
    if (!(runner in context.batch.runners)) return;
    const { batch, accepted } = acceptResults(context.batch, results, runner);
    // A finished child stays in the snapshot's children (and every saved snapshot) until stopped.
    enqueue.stopChild(runner);
    const plan = planChange(context, accepted);
    workCounts.contextUpdates++;
    enqueue.assign({ batch, ...plan.fields });
    for (const end of endEvents(self, context, accepted)) enqueue.emit(end);
    if (plan.updated) enqueue.emit(event(context, 'plan_updated', { plan: plan.updated }));
  }),
);

/** The context after a complete batch: its results appended in call order, the limits checked. */
function closedBatch(context: AgentContext, batch: ToolBatch) {
  const results = orderedResults(batch);
  // Keep this copy of the context: without it, XState's `Object.assign` copies of the context leave V8's
  // fast path and allocate 3x as much (tried twice, bench/README.md issue 37: resolveAssign 4.5 -> 13.9 KiB
  // a call when the spread was replaced by passing the calls apart).
  const verdict = checkLimitsAfterTools({ ...context, batch }, results);
  const notes = verdict.notes.map((note): Message => ({ role: 'system', content: note.message }));
  workCounts.messageCopies++;
  const messages = context.messages.concat(results.map(toolMessage), notes);
  const fields = {
    messages,
    batch: EMPTY_BATCH,
    repeatedCalls: verdict.repeatedCalls,
    consecutiveErrors: verdict.consecutiveErrors,
    finalReason: verdict.finalReason,
    // The final call after a tool hit the deadline gets a grace period past it.
    deadline:
      verdict.finalReason === 'timeout' && context.deadline !== null
        ? context.deadline + DEFAULTS.finalAnswerGraceMs
        : context.deadline,
  };
  return { fields, notes: verdict.notes };
}

/** The batch is complete: its results join the conversation, and the limits are checked. */
export const appendResults = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const { fields, notes } = closedBatch(context, context.batch);
    workCounts.contextUpdates++;
    enqueue.assign(fields);
    for (const note of notes) enqueue.emit(event(context, 'limit_warning', note));
  }),
);

/**
 * `runnerDone` and `appendResults` in one context update, when the runner's results complete the
 * batch; the update also enters Thinking (`enteredThinking`, whose entry then has nothing to do).
 */
export const closeBatchWithRunner = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    const { runner, results } = runnerResults(context.batch, ev);
    const { batch, accepted } = acceptResults(context.batch, results, runner);
    const { fields, notes } = closedBatch(context, batch);
    const plan = planChange(context, accepted);
    enqueue.stopChild(runner);
    for (const end of endEvents(self, context, accepted)) enqueue.emit(end);
    if (plan.updated) enqueue.emit(event(context, 'plan_updated', { plan: plan.updated }));
    for (const note of notes) enqueue.emit(event(context, 'limit_warning', note));
    // Entering Thinking: its events come after the batch's, as they did from its entry action.
    const entered = enteredThinking(enqueue as never, self, context, fields);
    // One object literal, every key always present and in this order (no spreads): XState copies it
    // into the new context with `Object.assign`, on V8's fast path only while its shape is stable.
    const next = {
      messages: entered.messages,
      batch: fields.batch,
      repeatedCalls: fields.repeatedCalls,
      consecutiveErrors: fields.consecutiveErrors,
      finalReason: fields.finalReason,
      deadline: fields.deadline,
      plan: plan.updated ?? context.plan,
      lastState: entered.lastState,
      iteration: entered.iteration,
      warned: entered.warned,
      partial: entered.partial,
    };
    workCounts.contextUpdates++;
    enqueue.assign(() => next);
  }),
);

/** Stops every running runner (the turn ends or the stream is discarded). */
export const stopRunners = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    for (const id of runnerIds(context.batch)) enqueue.stopChild(id);
  }),
);
