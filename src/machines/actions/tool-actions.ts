import { assign, enqueueActions } from 'xstate';
import type { ToolResult } from '../../tools/tool-call.js';
import type { AgentEventMap, Message } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import { checkLimitsAfterTools } from '../turn-limits.js';
import { callInfo, event, runInput, toolMessage } from '../turn-messages.js';

// Actions for tool calls: dispatching batches, approvals, results as they arrive, appending them.

export const dispatchCalls = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const ready = context.calls.filter((c) => !c.needsApproval && !context.started.includes(c.id));
    if (ready.length === 0) return;
    const id = `tools:${ready[0]!.id}`;
    enqueue.spawnChild('runTools', { id, input: runInput(context, ready) });
    enqueue.assign({
      started: [...context.started, ...ready.map((c) => c.id)],
      runners: [...context.runners, id],
    });
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
    const id = `tools:${call.id}`;
    enqueue.spawnChild('runTools', { id, input: runInput(context, [call]) });
    enqueue.assign({
      pending: context.pending.filter((p) => p !== call.id),
      started: [...context.started, call.id],
      runners: [...context.runners, id],
    });
    enqueue.emit(event(context, 'approval_resolved', { toolCallId: call.id, approved: true }));
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

export const toolStarted = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'TOOL.STARTED') return;
    enqueue.emit(event(context, 'tool_call_start', callInfo(ev.call)));
  }),
);

export const toolFinished = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'TOOL.FINISHED') return;
    const { result } = ev;
    // Results of calls no longer current (a discarded stream) are dropped.
    if (!context.started.includes(result.toolCallId)) return;
    enqueue.assign({ results: { ...context.results, [result.toolCallId]: result } });
    const call = context.calls.find((c) => c.id === result.toolCallId);
    const info = call
      ? callInfo(call)
      : { toolCallId: result.toolCallId, name: result.name, args: undefined };
    const end: AgentEventMap['tool_call_end'] = { ...info, durationMs: result.durationMs };
    if (result.isError) end.error = result.content;
    else end.result = result.content;
    enqueue.emit(event(context, 'tool_call_end', end));
  }),
);

export const runnerDone = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const actorId = (ev as unknown as { actorId?: string }).actorId;
    return { runners: context.runners.filter((id) => id !== actorId) };
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
