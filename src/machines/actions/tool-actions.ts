import { assign, enqueueActions } from 'xstate';
import type { Message } from '../../llm/message.js';
import type { ToolResult } from '../../tools/tool-call.js';
import type { AgentContext } from '../agent-context.js';
import type { AgentEventMap } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import { checkLimitsAfterTools } from '../turn-limits.js';
import { callInfo, event, runnerCalls, runnerStart, syntheticResult, toolMessage } from '../turn-messages.js';

// Actions for tool calls: dispatching batches, approvals, results as they arrive, appending them.

export const dispatchCalls = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const ready = context.calls.filter((c) => !c.needsApproval && !context.started.includes(c.id));
    if (ready.length === 0) return;
    const runner = runnerStart(context, ready);
    enqueue.spawnChild('runTools', { id: runner.id, input: runner.input });
    enqueue.assign({
      started: [...context.started, ...ready.map((c) => c.id)],
      runners: [...context.runners, runner.id],
    });
    for (const start of runner.starts) enqueue.emit(start);
  }),
);

export const requestApproval = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const pending = context.calls
      .filter((c) => context.pending.includes(c.id))
      .map((c) => ({ toolCallId: c.id, name: c.name, args: c.args ?? c.argsText }));
    enqueue.assign({ pausedAt: Date.now() });
    enqueue.emit(event(context, 'approval_requested', { pending }));
  }),
);

export const resumeClock = machineSetup.createAction(
  assign(({ context }) => ({
    deadline:
      context.deadline !== null && context.pausedAt !== null
        ? context.deadline + (Date.now() - context.pausedAt)
        : context.deadline,
    pausedAt: null,
  })),
);

export const approveCall = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'APPROVE') return;
    const call = context.calls.find((c) => c.id === ev.toolCallId)!;
    const runner = runnerStart(context, [call]);
    enqueue.spawnChild('runTools', { id: runner.id, input: runner.input });
    enqueue.assign({
      pending: context.pending.filter((p) => p !== call.id),
      started: [...context.started, call.id],
      runners: [...context.runners, runner.id],
    });
    enqueue.emit(event(context, 'approval_resolved', { toolCallId: call.id, approved: true }));
    for (const start of runner.starts) enqueue.emit(start);
  }),
);

export const rejectCall = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'REJECT') return;
    const call = context.calls.find((c) => c.id === ev.toolCallId)!;
    const why = ev.reason ? ` Reason: ${ev.reason}` : '';
    const result: ToolResult = {
      toolCallId: call.id,
      name: call.name,
      content: `The user declined to run this ${call.name} call.${why} Do not retry it unchanged; continue without it or ask the user.`,
      isError: false,
      durationMs: 0,
    };
    enqueue.assign({
      pending: context.pending.filter((p) => p !== call.id),
      results: { ...context.results, [call.id]: result },
    });
    const resolved = { toolCallId: call.id, approved: false } as AgentEventMap['approval_resolved'];
    if (ev.reason) resolved.reason = ev.reason;
    enqueue.emit(event(context, 'approval_resolved', resolved));
    enqueue.emit(
      event(context, 'tool_call_end', { ...callInfo(call), result: result.content, durationMs: 0 }),
    );
  }),
);

/**
 * The results among `incoming` that answer a current call (handed to a runner, not yet answered), the
 * results record with them added, and a `tool_call_end` event for each. Results of calls no longer
 * current (a discarded stream, an abandoned batch) are dropped.
 */
function acceptResults(context: AgentContext, incoming: readonly ToolResult[]) {
  const fresh = incoming.filter(
    (r) => context.started.includes(r.toolCallId) && context.results[r.toolCallId] === undefined,
  );
  const results = { ...context.results };
  const ends = fresh.map((result) => {
    results[result.toolCallId] = result;
    const call = context.calls.find((c) => c.id === result.toolCallId);
    const info = call
      ? callInfo(call)
      : { toolCallId: result.toolCallId, name: result.name, args: undefined };
    const end: AgentEventMap['tool_call_end'] = { ...info, durationMs: result.durationMs };
    if (result.isError) end.error = result.content;
    else end.result = result.content;
    return event(context, 'tool_call_end', end);
  });
  return { fresh: fresh.length > 0, results, ends };
}

/** A call's result as it ends, before its runner is done (the default runner sends none for its last call). */
export const toolFinished = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'TOOL.FINISHED') return;
    const { fresh, results, ends } = acceptResults(context, [ev.result]);
    if (!fresh) return;
    enqueue.assign({ results });
    for (const end of ends) enqueue.emit(end);
  }),
);

/**
 * A runner's done or error event. The done event's output (every result of the runner) records the
 * results not yet recorded: the runner sends no `TOOL.FINISHED` for the call that finishes last, so a
 * one-call batch costs one machine step less and ExecutingTool's `always` can leave in this step. A
 * runner that failed (a custom runner; the default one never rejects) gives its unanswered calls an
 * error result. Either way the runner is dropped from `runners`.
 */
export const runnerDone = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    const { actorId, output, error } = ev as unknown as {
      actorId: string;
      output?: unknown;
      error?: unknown;
    };
    let incoming: ToolResult[] = [];
    if (ev.type.startsWith('xstate.error.actor.')) {
      const message = error instanceof Error ? error.message : String(error);
      incoming = runnerCalls(actorId).flatMap((id) => {
        const call = context.calls.find((c) => c.id === id);
        return call ? [syntheticResult(call, `Error: the tool runner failed: ${message}`)] : [];
      });
    } else if (Array.isArray(output)) incoming = output as ToolResult[];
    const { fresh, results, ends } = acceptResults(context, incoming);
    const runners = context.runners.filter((id) => id !== actorId);
    enqueue.assign(fresh ? { runners, results } : { runners });
    for (const end of ends) enqueue.emit(end);
  }),
);

export const appendResults = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const results = context.calls.map((c) => context.results[c.id]!);
    const verdict = checkLimitsAfterTools(context, results);
    const notes: Message[] = verdict.notes.map((n) => ({ role: 'system', content: n.message }));
    enqueue.assign({
      messages: [...context.messages, ...results.map(toolMessage), ...notes],
      calls: [],
      results: {},
      started: [],
      repeatedCalls: verdict.repeatedCalls,
      consecutiveErrors: verdict.consecutiveErrors,
      finalReason: verdict.finalReason,
    });
    for (const note of verdict.notes) enqueue.emit(event(context, 'limit_warning', note));
  }),
);

export const stopRunners = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    for (const id of context.runners) enqueue.stopChild(id);
    enqueue.assign({ runners: [] });
  }),
);
