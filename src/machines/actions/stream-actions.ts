import { type AnyActorRef, enqueueActions } from 'xstate';
import type { Message } from '../../llm/message.js';
import { copyWith } from '../../object-copy.js';
import { workCounts } from '../../work-counters.js';
import type { LlmCallOutput } from '../actors/call-llm.js';
import type { AgentContext } from '../agent-context.js';
import type { AgentStateName } from '../agent-states.js';
import type { AgentEvent } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import {
  EMPTY_BATCH,
  needsApproval,
  readyCalls,
  receiveCalls,
  runnerIds,
  startRun,
  type ToolBatch,
} from '../tool-batch.js';
import { costWarnings } from '../turn-limits.js';
import {
  addUsage,
  event,
  hears,
  newRunnerId,
  runInput,
  startEvents,
  UNREPORTED_USAGE,
} from '../turn-messages.js';
import { enteredState } from './state-actions.js';

// Actions for the model call: streamed text, retries, context reports, calls started early, the answer.

export const streamDelta = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    if (ev.type !== 'LLM.DELTA') return;
    workCounts.contextUpdates++;
    enqueue.assign({ partial: context.partial + ev.delta });
    if (hears(self, 'content_chunk')) enqueue.emit(event(context, 'content_chunk', { delta: ev.delta }));
  }),
);

export const streamReset = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'LLM.RESET') return;
    // Calls started early from a discarded stream are stopped; the retried stream decides anew.
    for (const id of runnerIds(context.batch)) enqueue.stopChild(id);
    workCounts.contextUpdates++;
    enqueue.assign({ partial: '', batch: EMPTY_BATCH });
    enqueue.emit(event(context, 'stream_reset', { reason: ev.reason, attempt: ev.attempt }));
  }),
);

export const retryNotice = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'LLM.RETRY') return;
    const { type: _type, ...payload } = ev;
    enqueue.emit(event(context, 'retry', payload));
  }),
);

export const contextReport = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'LLM.CONTEXT') return;
    if (ev.warning) {
      const { used, max } = ev.warning;
      const message = `The request uses ${used} of ${max} context tokens; older tool results will be pruned past the budget.`;
      enqueue.emit(event(context, 'limit_warning', { limit: 'context_window', message, used, max }));
    }
    if (ev.pruned) enqueue.emit(event(context, 'context_pruned', ev.pruned));
  }),
);

/**
 * A call whose arguments are certainly complete while the stream still runs: started at once, unless
 * the turn is ending, it waits for approval, or it ends the turn (those wait for the whole message).
 */
export const startEarly = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    if (ev.type !== 'LLM.TOOL_CALL_READY' || context.finalReason) return;
    const { call } = ev;
    if (call.loopBreaking || needsApproval(call, context.alwaysAllowed)) return;
    if (context.batch.started.includes(call.id)) return;
    const runner = newRunnerId(self, context.batch);
    enqueue.spawnChild('runTools', { id: runner, input: runInput(context, [call]) });
    // Kept in the batch so an interrupt before the stream ends still records and answers it.
    workCounts.contextUpdates++;
    enqueue.assign({ batch: startRun(context.batch, [call], runner) });
    for (const start of startEvents(self, context, [call])) enqueue.emit(start);
  }),
);

/**
 * The assistant message, batch and usage the context takes from a model reply, as one object literal
 * with its keys always in this order (no spreads): XState copies it into a new context with
 * `Object.assign`, which stays on V8's fast path only while the update's shape is stable (bench/README.md,
 * issue 37). `batch` is the batch with a runner started in the same step; `lastState`, the state the
 * step enters when it records that (`receiveReply` with `enters`).
 */
function replyFields(
  context: AgentContext,
  output: LlmCallOutput,
  batch?: ToolBatch,
  lastState: AgentStateName | null = context.lastState,
) {
  const final = context.finalReason !== null;
  const message: Message = final
    ? { role: 'assistant', content: output.message.content ?? '' }
    : output.message;
  const usage = output.usage ?? UNREPORTED_USAGE;
  workCounts.messageCopies++;
  return {
    messages: context.messages.concat([message]),
    batch: batch ?? receiveCalls(context.batch, final ? [] : output.calls, context.alwaysAllowed),
    response: typeof output.message.content === 'string' ? output.message.content : '',
    partial: '',
    turnUsage: addUsage(context.turnUsage, usage),
    totalUsage: addUsage(context.totalUsage, usage),
    lastState,
  };
}

/** The `model_call`, `thinking` and `usage` events of a reply, for those who listen. */
function replyEvents(
  self: AnyActorRef,
  context: AgentContext,
  output: LlmCallOutput,
  next: ReturnType<typeof replyFields>,
) {
  const events: AgentEvent[] = [];
  if (output.record && hears(self, 'model_call')) {
    const { finishReason, usage } = output;
    events.push(event(context, 'model_call', copyWith(output.record, { finishReason, usage })));
  }
  if (output.reasoning) events.push(event(context, 'thinking', { content: output.reasoning }));
  for (const warning of costWarnings(context, next.turnUsage, next.totalUsage))
    events.push(event(context, 'limit_warning', { limit: 'cost_budget', ...warning }));
  if (output.usage && hears(self, 'usage')) {
    events.push(
      event(context, 'usage', {
        usage: output.usage,
        turnUsage: next.turnUsage,
        totalUsage: next.totalUsage,
      }),
    );
  }
  return events;
}

/**
 * The model's reply: the assistant message joins the conversation, its calls become the batch (those
 * the user must approve first are decided here, against the tools allowed for the session), and
 * the usage is counted. The reply of a final no-tools call keeps its text only.
 */
export const recordAssistant = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    const output = (ev as unknown as { output: LlmCallOutput }).output;
    const next = replyFields(context, output);
    workCounts.contextUpdates++;
    enqueue.assign(() => next);
    for (const e of replyEvents(self, context, output, next)) enqueue.emit(e);
  }),
);

/**
 * A reply with tool calls: recorded as by `recordAssistant`, and its calls that need no approval (and
 * did not start early) handed to one runner, in the same step and the same context update (the runner
 * is spawned by that update, not by a `spawnChild` of its own: each is a new snapshot). With
 * `{ enters }`, that update also records entering the target state (whose entry then has nothing to do).
 */
export const receiveReply = machineSetup.createAction(
  // Params stay `unknown` here: XState's extend() types actions made by createAction without params.
  enqueueActions(({ enqueue, context, event: ev, self }, params: unknown) => {
    const output = (ev as unknown as { output: LlmCallOutput }).output;
    const enters = (params as { enters?: AgentStateName } | undefined)?.enters;
    const received = receiveCalls(
      context.batch,
      context.finalReason !== null ? [] : output.calls,
      context.alwaysAllowed,
    );
    const ready = readyCalls(received);
    const runner = ready.length > 0 ? newRunnerId(self, received) : undefined;
    const batch = runner ? startRun(received, ready, runner) : received;
    const lastState = enters ? enteredState(enqueue as never, self, context, enters).lastState : undefined;
    const next = replyFields(context, output, batch, lastState);
    workCounts.contextUpdates++;
    if (runner === undefined) enqueue.assign(() => next);
    else {
      const input = runInput(context, ready);
      enqueue.assign(({ spawn }) => {
        spawn('runTools', { id: runner, input });
        return next;
      });
    }
    for (const e of replyEvents(self, context, output, next)) enqueue.emit(e);
    for (const start of startEvents(self, context, ready)) enqueue.emit(start);
  }),
);
