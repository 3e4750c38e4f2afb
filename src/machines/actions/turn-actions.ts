import { type AnyActorRef, assign, emit, enqueueActions } from 'xstate';
import { DEFAULTS } from '../../defaults.js';
import type { Message } from '../../llm/message.js';
import { workCounts } from '../../work-counters.js';
import type { LlmCallOutput } from '../actors/call-llm.js';
import { type AgentContext, deadlineFrom, endedTurnFields, newTurnFields } from '../agent-context.js';
import type { AgentEvent, TerminateReason } from '../emitted-events.js';
import { machineSetup } from '../machine-setup.js';
import {
  answerAll,
  EMPTY_BATCH,
  loopBreaker,
  orderedResults,
  runnerIds,
  toolMessage,
} from '../tool-batch.js';
import { finalCallNote, iterationWarning } from '../turn-limits.js';
import { event, hears, unfinishedStream } from '../turn-messages.js';
import { enteredState } from './state-actions.js';

// Actions that start, continue and end a turn.

export const startTurn = machineSetup.createAction(
  enqueueActions(({ enqueue, context, event: ev, self }) => {
    if (ev.type !== 'USER_MESSAGE') return;
    workCounts.messageCopies++;
    const next = {
      messages: context.messages.concat([{ role: 'user', content: ev.text }]),
      ...newTurnFields(context, context.turn + 1, ev.at),
    };
    workCounts.contextUpdates++;
    enqueue.assign(() => next);
    if (hears(self, 'turn_start'))
      enqueue.emit(
        event({ ...context, turn: next.turn, iteration: next.iteration }, 'turn_start', { input: ev.text }),
      );
  }),
);

export const continueTurn = machineSetup.createAction(
  assign(({ context, event: ev }) => ({
    terminateReason: null,
    error: null,
    finalReason: null,
    response: '',
    deadline: 'at' in ev ? deadlineFrom(context, ev.at) : context.deadline,
  })),
);

/**
 * Entering Thinking, before each model call: the iteration is counted, the model is warned when the
 * limit is near, and told why tools are off when this is the final call. Returns the fields for the
 * context update of the step that enters (its events are queued on `enqueue`): a transition into
 * Thinking that updates the context anyway (`closeBatchWithRunner`, `timeoutFinalCall`) merges them
 * into its own update; the others end with `enterThinking`. Every context update is a new snapshot
 * (bench/README.md, issue 37). `messages` and `finalReason` are the values after the transition's own
 * update (the other fields it reads are not changed by one).
 */
export function enteredThinking(
  enqueue: { emit(event: AgentEvent): void },
  self: AnyActorRef,
  context: AgentContext,
  current: Pick<AgentContext, 'messages' | 'finalReason'> = context,
): Pick<AgentContext, 'lastState' | 'messages' | 'iteration' | 'warned' | 'partial'> {
  const { lastState } = enteredState(enqueue, self, context, 'Thinking');
  // Back from compacting for this model call: it was counted (and warned about) on the way in.
  // The same keys either way, in the same order: callers put them into one object literal.
  if (context.lastState === 'Compacting') {
    return {
      lastState,
      messages: current.messages,
      iteration: context.iteration,
      warned: context.warned,
      partial: '',
    };
  }
  const { finalReason } = current;
  const warning = iterationWarning(context, finalReason);
  const notes: Message[] = [];
  if (warning) {
    notes.push({ role: 'system', content: warning.message });
    enqueue.emit(event(context, 'limit_warning', { limit: 'max_iterations', ...warning }));
  }
  if (finalReason) notes.push(finalCallNote(finalReason));
  // Usually no note: the context keeps its array, and a note costs one copy, not one per note.
  if (notes.length > 0) workCounts.messageCopies++;
  const messages = notes.length > 0 ? current.messages.concat(notes) : current.messages;
  const iteration = context.iteration + 1;
  if (hears(self, 'iteration')) {
    enqueue.emit(event({ ...context, iteration }, 'iteration', { maxIterations: context.maxIterations }));
  }
  return {
    lastState,
    messages,
    iteration,
    warned: context.warned || warning !== null,
    partial: '',
  };
}

/**
 * Entering Thinking, as the last action of a transition into it that has no context update to merge
 * `enteredThinking` into (Thinking has no entry action: the step before each model call, which closes a
 * tool batch, would pay for two context updates).
 */
export const enterThinking = machineSetup.createAction(
  enqueueActions(({ enqueue, context, self }) => {
    const fields = enteredThinking(enqueue as never, self, context);
    workCounts.contextUpdates++;
    enqueue.assign(() => fields);
  }),
);

export const finishWithBreaker = machineSetup.createAction(
  assign(({ context }) => {
    const breaker = loopBreaker(context.batch)!;
    workCounts.messageCopies++;
    return {
      messages: context.messages.concat(orderedResults(context.batch).map(toolMessage)),
      batch: EMPTY_BATCH,
      response: context.batch.results[breaker.id]!.content,
      terminateReason: (breaker.loopBreaking === 'question' ? 'question' : 'completed') as TerminateReason,
    };
  }),
);

export const finishWithAnswer = machineSetup.createAction(
  assign(({ context }) => {
    workCounts.contextUpdates++;
    return { terminateReason: context.finalReason ?? ('completed' as TerminateReason) };
  }),
);

/**
 * A reply whose calls are not run (`stopReplyReason`, the guard): cut off by the model's output limit
 * or filter, or else reaching a cost budget. The assistant message is kept as sent (it was recorded,
 * and paid for); its calls are answered without running them (those started early keep their result).
 */
export const finishCutOff = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const output = (ev as unknown as { output: LlmCallOutput }).output;
    const cut = output.finishReason === 'length' || output.finishReason === 'content_filter';
    const reason: TerminateReason = cut ? (output.finishReason as TerminateReason) : 'cost_budget';
    const note = cut
      ? `Not run: the model's output was cut off (finish_reason: ${output.finishReason}).`
      : 'Not run: the cost budget (limits.maxCostUsd or maxSessionCostUsd) was reached.';
    return {
      messages: context.messages.concat(answerAll(context.batch, note)),
      ...endedTurnFields(reason),
    };
  }),
);

/** Every call of the batch (and of a stream cut short) gets its one answer, and the turn ends. */
function endTurnEarly(context: AgentContext, marker: string, fallback: string) {
  return context.messages.concat(unfinishedStream(context, marker), answerAll(context.batch, fallback));
}

export const recordInterrupt = machineSetup.createAction(
  assign(({ context }) => ({
    messages: endTurnEarly(
      context,
      '[interrupted]',
      'Error: interrupted by the user before the tool finished.',
    ),
    ...endedTurnFields('interrupted'),
    response: context.partial,
  })),
);

export const recordError = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const error = (ev as unknown as { error: unknown }).error;
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    return {
      messages: endTurnEarly(context, '[cut short by an error]', `Error: not run: ${message}`),
      ...endedTurnFields('error'),
      error: typeof code === 'string' ? { message, code } : { message },
    };
  }),
);

/**
 * The session could not be written: the turn ends in Error naming the write. A call still unanswered
 * may have run before the write failed, so its answer says it may or may not have taken effect.
 */
export const recordWriteFailure = machineSetup.createAction(
  assign(({ context, event: ev }) => {
    const message = ev.type === 'WRITE_FAILED' ? ev.message : 'the session could not be written';
    return {
      messages: endTurnEarly(
        context,
        '[cut short: the session could not be written]',
        `Error: the turn stopped because the session could not be written (${message}). ` +
          'This call may or may not have taken effect.',
      ),
      ...endedTurnFields('error'),
      error: { message, code: 'session_store' },
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
    workCounts.contextUpdates++;
    enqueue.assign({ maxIterations: context.maxIterations + by, warned: false });
  }),
);

/**
 * The deadline passed during the model call: calls started from the cut stream are stopped and
 * answered, and the model gets one final call without tools, with a grace period past the deadline.
 */
export const timeoutFinalCall = machineSetup.createAction(
  enqueueActions(({ enqueue, context, self }) => {
    for (const id of runnerIds(context.batch)) enqueue.stopChild(id);
    const fields = {
      messages: endTurnEarly(
        context,
        '[cut short by the deadline]',
        "Error: stopped: the turn's deadline passed.",
      ),
      finalReason: 'timeout' as TerminateReason,
      deadline: context.deadline === null ? null : context.deadline + DEFAULTS.finalAnswerGraceMs,
      batch: EMPTY_BATCH,
      partial: '',
    };
    enqueue.emit(
      event(context, 'limit_warning', {
        limit: 'timeout',
        message: 'The turn deadline passed during the model call; asking for a final answer without tools.',
        used: context.limits.timeoutMs ?? 0,
        max: context.limits.timeoutMs ?? 0,
      }),
    );
    // Thinking is entered again, in this update.
    const next = { ...fields, ...enteredThinking(enqueue, self, context, fields) };
    workCounts.contextUpdates++;
    enqueue.assign(() => next);
  }),
);
