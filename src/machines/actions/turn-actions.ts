import { assign, emit, enqueueActions } from 'xstate';
import { DEFAULTS } from '../../defaults.js';
import type { LlmCallOutput } from '../actors/call-llm.js';
import type { AgentContext } from '../agent-context.js';
import type { TerminateReason } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import { finalCallNote, iterationWarning } from '../turn-limits.js';
import {
  batchMessages,
  event,
  loopBreaker,
  meta,
  NO_BATCH,
  toolMessage,
  unfinishedStream,
} from '../turn-messages.js';

// Actions that start, continue and end a turn.

export const startTurn = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'USER_MESSAGE') return;
    const timeoutMs = context.limits.timeoutMs;
    const next: Partial<AgentContext> = {
      messages: [...context.messages, { role: 'user', content: ev.text }],
      turn: context.turn + 1,
      iteration: 0,
      maxIterations: context.limits.maxIterations,
      warned: false,
      deadline: timeoutMs === null ? null : Date.now() + timeoutMs,
      ...NO_BATCH,
      finalReason: null,
      response: '',
      terminateReason: null,
      error: null,
      turnUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      repeatedCalls: {},
      consecutiveErrors: 0,
    };
    enqueue.assign(next);
    enqueue.emit({ type: 'turn_start', ...meta({ ...context, ...next } as AgentContext), input: ev.text });
  }),
);

export const continueTurn = machineSetup.createAction(
  assign(({ context }) => ({
    terminateReason: null,
    error: null,
    finalReason: null,
    response: '',
    deadline: context.limits.timeoutMs === null ? null : Date.now() + context.limits.timeoutMs,
  })),
);

export const beginIteration = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const warning = iterationWarning(context);
    let messages = context.messages;
    if (warning) {
      messages = [...messages, { role: 'system', content: warning.message }];
      enqueue.emit(event(context, 'limit_warning', { limit: 'max_iterations', ...warning }));
    }
    if (context.finalReason) messages = [...messages, finalCallNote(context.finalReason)];
    const next = { ...context, iteration: context.iteration + 1 };
    enqueue.assign({
      messages,
      iteration: next.iteration,
      warned: context.warned || warning !== null,
      partial: '',
    });
    enqueue.emit(event(next, 'iteration', { maxIterations: context.maxIterations }));
  }),
);

export const finishWithBreaker = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    const breaker = loopBreaker(context)!;
    const results = context.calls.map((c) => context.results[c.id]!);
    enqueue.assign({
      messages: [...context.messages, ...results.map(toolMessage)],
      calls: [],
      results: {},
      started: [],
      response: context.results[breaker.id]!.content,
      terminateReason: breaker.loopBreaking === 'question' ? 'question' : 'completed',
    });
  }),
);

export const finishWithAnswer = machineSetup.createAction(
  assign(({ context }) => ({
    terminateReason: context.finalReason ?? ('completed' as TerminateReason),
  })),
);

export const finishCutOff = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const output = (ev as unknown as { output: LlmCallOutput }).output;
    const reason: TerminateReason = output.finishReason === 'content_filter' ? 'content_filter' : 'length';
    // The assistant message is kept as sent; its calls are answered without running them.
    const note = `Not run: the model's output was cut off (finish_reason: ${output.finishReason}).`;
    return {
      messages: [...context.messages, ...batchMessages(context, note)],
      ...NO_BATCH,
      terminateReason: reason,
    };
  }),
);

export const recordInterrupt = machineSetup.createAction(
  assign(({ context }) => {
    const messages = [
      ...context.messages,
      ...unfinishedStream(context, '[interrupted]'),
      ...batchMessages(context, 'Error: interrupted by the user before the tool finished.'),
    ];
    return {
      messages,
      ...NO_BATCH,
      partial: '',
      pausedAt: null,
      response: context.partial,
      terminateReason: 'interrupted' as TerminateReason,
    };
  }),
);

export const recordError = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const error = (ev as unknown as { error: unknown }).error;
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    // Any calls of the last assistant message (or of a stream cut short) still get their one tool message.
    const messages = [
      ...context.messages,
      ...unfinishedStream(context, '[cut short by an error]'),
      ...batchMessages(context, `Error: not run: ${message}`),
    ];
    return {
      messages,
      ...NO_BATCH,
      partial: '',
      error: typeof code === 'string' ? { message, code } : { message },
      terminateReason: 'error' as TerminateReason,
    };
  }),
);

export const emitTurnEnd = machineSetup.createAction(
  emit(({ context }) =>
    event(context, 'turn_end', {
      terminateReason: context.terminateReason ?? 'completed',
      response: context.response,
      iterations: context.iteration,
    }),
  ),
);

export const emitError = machineSetup.createAction(
  emit(({ context }) => event(context, 'error', context.error ?? { message: 'unknown error' })),
);

export const extendLimit = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev }) => {
    if (ev.type !== 'EXTEND_LIMIT') return;
    const by = Math.max(1, Math.floor(ev.by ?? DEFAULTS.extendIterationsBy));
    enqueue.assign({ maxIterations: context.maxIterations + by, warned: false });
  }),
);

export const timeoutFinalCall = machineSetup.createAction(
  enqueueActions(({ enqueue, context }) => {
    for (const id of context.runners) enqueue.stopChild(id);
    // Calls already started from the stream the deadline cut are recorded and answered.
    const messages = [
      ...context.messages,
      ...unfinishedStream(context, '[cut short by the deadline]'),
      ...batchMessages(context, "Error: stopped: the turn's deadline passed."),
    ];
    enqueue.assign({
      messages,
      finalReason: 'timeout',
      runners: [],
      calls: [],
      started: [],
      results: {},
      partial: '',
    });
    enqueue.emit(
      event(context, 'limit_warning', {
        limit: 'timeout',
        message: 'The turn deadline passed during the model call; asking for a final answer without tools.',
        used: context.limits.timeoutMs ?? 0,
        max: context.limits.timeoutMs ?? 0,
      }),
    );
  }),
);
