import { enqueueActions } from 'xstate';
import type { Message } from '../../llm/message.js';
import type { LlmCallOutput } from '../actors/call-llm.js';
import { machineSetup } from '../machine-setup.js';
import { addUsage, event, runnerStart } from '../turn-messages.js';

// Actions for the model call: streamed text, retries, context reports, calls started early, the answer.

export const streamDelta = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'LLM.DELTA') return;
    enqueue.assign({ partial: context.partial + ev.delta });
    enqueue.emit(event(context, 'content_chunk', { delta: ev.delta }));
  }),
);

export const streamReset = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'LLM.RESET') return;
    // Calls started early from a discarded stream are stopped; the retried stream decides anew.
    for (const id of context.runners) enqueue.stopChild(id);
    enqueue.assign({ partial: '', runners: [], calls: [], started: [], results: {} });
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

export const startEarly = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'LLM.TOOL_CALL_READY' || context.finalReason) return;
    if (context.started.includes(ev.call.id)) return;
    const runner = runnerStart(context, [ev.call]);
    enqueue.spawnChild('runTools', { id: runner.id, input: runner.input });
    // Kept in `calls` so an interrupt before the stream ends still records and answers it.
    enqueue.assign({
      calls: [...context.calls, ev.call],
      started: [...context.started, ev.call.id],
      runners: [...context.runners, runner.id],
    });
    for (const start of runner.starts) enqueue.emit(start);
  }),
);

export const recordAssistant = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    const output = (ev as unknown as { output: LlmCallOutput }).output;
    const final = context.finalReason !== null;
    const calls = final ? [] : output.calls;
    const message: Message = final
      ? { role: 'assistant', content: output.message.content ?? '' }
      : output.message;
    const usage = output.usage;
    const turnUsage = usage ? addUsage(context.turnUsage, usage) : context.turnUsage;
    const totalUsage = usage ? addUsage(context.totalUsage, usage) : context.totalUsage;
    enqueue.assign({
      messages: [...context.messages, message],
      calls,
      results: Object.fromEntries(
        Object.entries(context.results).filter(([id]) => calls.some((c) => c.id === id)),
      ),
      pending: calls.filter((c) => c.needsApproval).map((c) => c.id),
      response: typeof output.message.content === 'string' ? output.message.content : '',
      partial: '',
      turnUsage,
      totalUsage,
    });
    if (output.reasoning) enqueue.emit(event(context, 'thinking', { content: output.reasoning }));
    if (usage) enqueue.emit(event(context, 'usage', { usage, turnUsage, totalUsage }));
  }),
);
