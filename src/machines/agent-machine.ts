import { type ActorRefFrom, assign, emit, enqueueActions, fromPromise, setup } from 'xstate';
import { DEFAULTS } from '../defaults.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { LlmCallInput, LlmCallOutput } from './actors/call-llm.js';
import type { RunToolsInput } from './actors/run-tools.js';
import { type AgentContext, type AgentMachineInput, initialContext } from './agent-context.js';
import type { AgentMachineEvent } from './agent-events.js';
import type {
  AgentEvent,
  AgentEventMap,
  AgentEventType,
  Message,
  TerminateReason,
} from './emitted-events.js';
import { checkLimitsAfterTools, finalCallNote, iterationWarning } from './turn-limits.js';

/** What the `initialize` actor returns: messages to add before the first turn (critical-action context). */
export interface InitializeOutput {
  messages?: Message[];
}

const notProvided = (name: string) =>
  fromPromise<never, unknown>(async () => {
    throw new Error(
      `agentMachine: the "${name}" actor was not provided; use createAgent() or machine.provide()`,
    );
  });

/** The common fields of every emitted event. */
function meta(context: AgentContext) {
  return {
    sessionId: context.sessionId,
    turn: context.turn,
    iteration: context.iteration,
    timestamp: Date.now(),
  };
}

/** Builds one emitted event from the context and its payload. */
function event<K extends AgentEventType>(
  context: AgentContext,
  type: K,
  payload: AgentEventMap[K],
): AgentEvent<K> {
  return { type, ...meta(context), ...payload } as unknown as AgentEvent<K>;
}

function toolMessage(result: ToolResult): Message {
  return { role: 'tool', tool_call_id: result.toolCallId, content: result.content };
}

function syntheticResult(call: ToolCallRequest, content: string): ToolResult {
  return { toolCallId: call.id, name: call.name, content, isError: true, durationMs: 0 };
}

/** Tool messages for every call of the batch, in call order, answering unanswered calls with `fallback`. */
function batchMessages(context: AgentContext, fallback: string): Message[] {
  return context.calls.map((call) =>
    toolMessage(context.results[call.id] ?? syntheticResult(call, fallback)),
  );
}

/**
 * When a model call ends before its stream did (interrupt, deadline, error): the text streamed so far,
 * marked, and the calls already started from it, as one assistant message. Empty outside Thinking.
 */
function unfinishedStream(context: AgentContext, marker: string): Message[] {
  if (context.lastState !== 'Thinking' || (!context.partial && context.calls.length === 0)) return [];
  const message: Message = {
    role: 'assistant',
    content: context.partial ? `${context.partial} ${marker}` : null,
  };
  if (context.calls.length > 0) {
    message.tool_calls = context.calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.argsText },
    }));
  }
  return [message];
}

const batchComplete = (context: AgentContext) =>
  context.calls.length > 0 && context.calls.every((call) => context.results[call.id] !== undefined);

const loopBreaker = (context: AgentContext) =>
  context.calls.find(
    (call) => call.loopBreaking && context.results[call.id] && !context.results[call.id]!.isError,
  );

/**
 * The agent loop as a statechart. Pure definition: the LLM call (`callLlm`), the tool runner
 * (`runTools`) and start-up (`initialize`) are actors referenced by name and bound with
 * `machine.provide(...)` (`createAgent` does it). See docs/agent-loop.md.
 */
export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentMachineEvent,
    input: {} as AgentMachineInput,
    emitted: {} as AgentEvent,
  },
  actors: {
    initialize: fromPromise<InitializeOutput, { sessionId: string }>(async () => ({})),
    callLlm: notProvided('callLlm') as unknown as ReturnType<typeof fromPromise<LlmCallOutput, LlmCallInput>>,
    runTools: notProvided('runTools') as unknown as ReturnType<
      typeof fromPromise<ToolResult[], RunToolsInput>
    >,
  },
  guards: {
    isPending: ({ context, event }) =>
      (event.type === 'APPROVE' || event.type === 'REJECT') && context.pending.includes(event.toolCallId),
    noPending: ({ context }) => context.pending.length === 0,
    batchComplete: ({ context }) => batchComplete(context),
    batchEndsTurn: ({ context }) => batchComplete(context) && loopBreaker(context) !== undefined,
    canContinueTurn: ({ context }) => context.initialized && context.turn > 0,
    isInitialized: ({ context }) => context.initialized,
    endedAtIterationLimit: ({ context }) => context.terminateReason === 'max_iterations',
  },
  actions: {
    enterState: enqueueActions(({ enqueue, context }, params: { state: string }) => {
      enqueue.emit(event(context, 'state_change', { state: params.state, previous: context.lastState }));
      enqueue.assign({ lastState: params.state });
    }),
    startTurn: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'USER_MESSAGE') return;
      const timeoutMs = context.limits.timeoutMs;
      const next: Partial<AgentContext> = {
        messages: [...context.messages, { role: 'user', content: ev.text }],
        turn: context.turn + 1,
        iteration: 0,
        maxIterations: context.limits.maxIterations,
        warned: false,
        deadline: timeoutMs === null ? null : Date.now() + timeoutMs,
        calls: [],
        results: {},
        pending: [],
        started: [],
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
    continueTurn: assign(({ context }) => ({
      terminateReason: null,
      error: null,
      finalReason: null,
      response: '',
      deadline: context.limits.timeoutMs === null ? null : Date.now() + context.limits.timeoutMs,
    })),
    beginIteration: enqueueActions(({ enqueue, context }) => {
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
    streamDelta: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'LLM.DELTA') return;
      enqueue.assign({ partial: context.partial + ev.delta });
      enqueue.emit(event(context, 'content_chunk', { delta: ev.delta }));
    }),
    streamReset: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'LLM.RESET') return;
      // Calls started early from a discarded stream are stopped; the retried stream decides anew.
      for (const id of context.runners) enqueue.stopChild(id);
      enqueue.assign({ partial: '', runners: [], calls: [], started: [], results: {} });
      enqueue.emit(event(context, 'stream_reset', { reason: ev.reason, attempt: ev.attempt }));
    }),
    retryNotice: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'LLM.RETRY') return;
      const { type: _type, ...payload } = ev;
      enqueue.emit(event(context, 'retry', payload));
    }),
    contextReport: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'LLM.CONTEXT') return;
      if (ev.warning) {
        const { used, max } = ev.warning;
        const message = `The request uses ${used} of ${max} context tokens; older tool results will be pruned past the budget.`;
        enqueue.emit(event(context, 'limit_warning', { limit: 'context_window', message, used, max }));
      }
      if (ev.pruned) enqueue.emit(event(context, 'context_pruned', ev.pruned));
    }),
    startEarly: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'LLM.TOOL_CALL_READY' || context.finalReason) return;
      if (context.started.includes(ev.call.id)) return;
      const id = `tools:${ev.call.id}`;
      enqueue.spawnChild('runTools', { id, input: runInput(context, [ev.call]) });
      // Kept in `calls` so an interrupt before the stream ends still records and answers it.
      enqueue.assign({
        calls: [...context.calls, ev.call],
        started: [...context.started, ev.call.id],
        runners: [...context.runners, id],
      });
    }),
    recordAssistant: enqueueActions(({ enqueue, context, event: ev }) => {
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
    dispatchCalls: enqueueActions(({ enqueue, context }) => {
      const ready = context.calls.filter((c) => !c.needsApproval && !context.started.includes(c.id));
      if (ready.length === 0) return;
      const id = `tools:${ready[0]!.id}`;
      enqueue.spawnChild('runTools', { id, input: runInput(context, ready) });
      enqueue.assign({
        started: [...context.started, ...ready.map((c) => c.id)],
        runners: [...context.runners, id],
      });
    }),
    requestApproval: enqueueActions(({ enqueue, context }) => {
      const pending = context.calls
        .filter((c) => context.pending.includes(c.id))
        .map((c) => ({ toolCallId: c.id, name: c.name, args: c.args ?? c.argsText }));
      enqueue.assign({ pausedAt: Date.now() });
      enqueue.emit(event(context, 'approval_requested', { pending }));
    }),
    resumeClock: assign(({ context }) => ({
      deadline:
        context.deadline !== null && context.pausedAt !== null
          ? context.deadline + (Date.now() - context.pausedAt)
          : context.deadline,
      pausedAt: null,
    })),
    approveCall: enqueueActions(({ enqueue, context, event: ev }) => {
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
    rejectCall: enqueueActions(({ enqueue, context, event: ev }) => {
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
    toolStarted: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'TOOL.STARTED') return;
      enqueue.emit(event(context, 'tool_call_start', callInfo(ev.call)));
    }),
    toolFinished: enqueueActions(({ enqueue, context, event: ev }) => {
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
    runnerDone: assign(({ context, event: ev }) => {
      const actorId = (ev as unknown as { actorId?: string }).actorId;
      return { runners: context.runners.filter((id) => id !== actorId) };
    }),
    appendResults: enqueueActions(({ enqueue, context }) => {
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
    finishWithBreaker: enqueueActions(({ enqueue, context }) => {
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
    finishWithAnswer: assign(({ context }) => ({
      terminateReason: context.finalReason ?? ('completed' as TerminateReason),
    })),
    finishCutOff: assign(({ context, event: ev }) => {
      const output = (ev as unknown as { output: LlmCallOutput }).output;
      const reason: TerminateReason = output.finishReason === 'content_filter' ? 'content_filter' : 'length';
      // The assistant message is kept as sent; its calls are answered without running them.
      const note = `Not run: the model's output was cut off (finish_reason: ${output.finishReason}).`;
      return {
        messages: [...context.messages, ...batchMessages(context, note)],
        calls: [],
        results: {},
        pending: [],
        started: [],
        terminateReason: reason,
      };
    }),
    stopRunners: enqueueActions(({ enqueue, context }) => {
      for (const id of context.runners) enqueue.stopChild(id);
      enqueue.assign({ runners: [] });
    }),
    recordInterrupt: assign(({ context }) => {
      const messages = [
        ...context.messages,
        ...unfinishedStream(context, '[interrupted]'),
        ...batchMessages(context, 'Error: interrupted by the user before the tool finished.'),
      ];
      return {
        messages,
        calls: [],
        results: {},
        pending: [],
        started: [],
        partial: '',
        pausedAt: null,
        response: context.partial,
        terminateReason: 'interrupted' as TerminateReason,
      };
    }),
    recordError: assign(({ context, event: ev }) => {
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
        calls: [],
        results: {},
        pending: [],
        started: [],
        partial: '',
        error: typeof code === 'string' ? { message, code } : { message },
        terminateReason: 'error' as TerminateReason,
      };
    }),
    emitTurnEnd: emit(({ context }) =>
      event(context, 'turn_end', {
        terminateReason: context.terminateReason ?? 'completed',
        response: context.response,
        iterations: context.iteration,
      }),
    ),
    emitError: emit(({ context }) => event(context, 'error', context.error ?? { message: 'unknown error' })),
    extendLimit: enqueueActions(({ enqueue, context, event: ev }) => {
      if (ev.type !== 'EXTEND_LIMIT') return;
      const by = Math.max(1, Math.floor(ev.by ?? DEFAULTS.extendIterationsBy));
      enqueue.assign({ maxIterations: context.maxIterations + by, warned: false });
    }),
    timeoutFinalCall: enqueueActions(({ enqueue, context }) => {
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
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => initialContext(input ?? {}),
  initial: 'Initializing',
  on: {
    'TOOL.STARTED': { actions: 'toolStarted' },
    'TOOL.FINISHED': { actions: 'toolFinished' },
    'xstate.done.actor.*': { actions: 'runnerDone' },
    'xstate.error.actor.*': { actions: 'runnerDone' },
    EXTEND_LIMIT: { actions: 'extendLimit' },
  },
  states: {
    Initializing: {
      entry: { type: 'enterState', params: { state: 'Initializing' } },
      invoke: {
        id: 'initialize',
        src: 'initialize',
        input: ({ context }) => ({ sessionId: context.sessionId }),
        onDone: {
          target: 'AwaitingInput',
          actions: assign(({ context, event: ev }) => ({
            messages: [...context.messages, ...(ev.output?.messages ?? [])],
            initialized: true,
          })),
        },
        onError: {
          target: 'Error',
          actions: assign(({ event: ev }) => ({
            error: {
              message: ev.error instanceof Error ? ev.error.message : String(ev.error),
              code: 'init_failed',
            },
            terminateReason: 'error' as TerminateReason,
          })),
        },
      },
    },
    AwaitingInput: {
      entry: { type: 'enterState', params: { state: 'AwaitingInput' } },
      on: { USER_MESSAGE: { target: 'Thinking', actions: 'startTurn' } },
    },
    Thinking: {
      entry: [{ type: 'enterState', params: { state: 'Thinking' } }, 'beginIteration'],
      invoke: {
        id: 'callLlm',
        src: 'callLlm',
        input: ({ context }) => ({
          sessionId: context.sessionId,
          turn: context.turn,
          iteration: context.iteration,
          messages: context.messages,
          toolsEnabled: context.finalReason === null,
          deadline:
            context.finalReason === 'timeout'
              ? Date.now() + DEFAULTS.finalAnswerGraceMs
              : context.finalReason === null
                ? context.deadline
                : null,
        }),
        onDone: [
          {
            guard: ({ event: ev }) =>
              ev.output.finishReason === 'length' || ev.output.finishReason === 'content_filter',
            target: 'Completed',
            actions: ['recordAssistant', 'stopRunners', 'finishCutOff'],
          },
          {
            guard: ({ context, event: ev }) => context.finalReason !== null || ev.output.calls.length === 0,
            target: 'Completed',
            actions: ['recordAssistant', 'finishWithAnswer'],
          },
          {
            guard: ({ event: ev }) => ev.output.calls.some((c) => c.needsApproval),
            target: 'WaitingApproval',
            actions: ['recordAssistant', 'dispatchCalls'],
          },
          { target: 'ExecutingTool', actions: ['recordAssistant', 'dispatchCalls'] },
        ],
        onError: [
          {
            guard: ({ context, event: ev }) =>
              context.finalReason === null &&
              (ev.error as { code?: string } | null)?.code === 'deadline_exceeded',
            target: 'Thinking',
            reenter: true,
            actions: 'timeoutFinalCall',
          },
          { target: 'Error', actions: ['stopRunners', 'recordError'] },
        ],
      },
      on: {
        'LLM.DELTA': { actions: 'streamDelta' },
        'LLM.RESET': { actions: 'streamReset' },
        'LLM.RETRY': { actions: 'retryNotice' },
        'LLM.CONTEXT': { actions: 'contextReport' },
        'LLM.TOOL_CALL_READY': { actions: 'startEarly' },
        INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
      },
    },
    ExecutingTool: {
      entry: { type: 'enterState', params: { state: 'ExecutingTool' } },
      always: [
        { guard: 'batchEndsTurn', target: 'Completed', actions: 'finishWithBreaker' },
        { guard: 'batchComplete', target: 'Thinking', actions: 'appendResults' },
      ],
      on: { INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] } },
    },
    WaitingApproval: {
      entry: [{ type: 'enterState', params: { state: 'WaitingApproval' } }, 'requestApproval'],
      exit: 'resumeClock',
      always: { guard: 'noPending', target: 'ExecutingTool' },
      on: {
        APPROVE: { guard: 'isPending', actions: 'approveCall' },
        REJECT: { guard: 'isPending', actions: 'rejectCall' },
        INTERRUPT: { target: 'Interrupted', actions: ['stopRunners', 'recordInterrupt'] },
      },
    },
    Completed: {
      entry: [{ type: 'enterState', params: { state: 'Completed' } }, 'emitTurnEnd'],
      on: {
        USER_MESSAGE: { target: 'Thinking', actions: 'startTurn' },
        EXTEND_LIMIT: {
          guard: 'endedAtIterationLimit',
          target: 'Thinking',
          actions: ['extendLimit', 'continueTurn'],
        },
      },
    },
    Interrupted: {
      entry: [{ type: 'enterState', params: { state: 'Interrupted' } }, 'emitTurnEnd'],
      on: {
        USER_MESSAGE: { target: 'Thinking', actions: 'startTurn' },
        RESUME: { guard: 'canContinueTurn', target: 'Thinking', actions: 'continueTurn' },
      },
    },
    Error: {
      entry: [{ type: 'enterState', params: { state: 'Error' } }, 'emitError', 'emitTurnEnd'],
      on: {
        USER_MESSAGE: { guard: 'isInitialized', target: 'Thinking', actions: 'startTurn' },
        RESUME: { guard: 'canContinueTurn', target: 'Thinking', actions: 'continueTurn' },
      },
    },
  },
});

/** The agent machine type, for embedders typing their actor refs. */
export type AgentMachine = typeof agentMachine;
export type AgentActorRef = ActorRefFrom<AgentMachine>;

function runInput(context: AgentContext, calls: ToolCallRequest[]): RunToolsInput {
  return {
    sessionId: context.sessionId,
    turn: context.turn,
    iteration: context.iteration,
    calls,
    deadline: context.deadline,
  };
}

function callInfo(call: ToolCallRequest) {
  return { toolCallId: call.id, name: call.name, args: call.args ?? call.argsText };
}

function addUsage(a: AgentEventMap['usage']['usage'], b: AgentEventMap['usage']['usage']) {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
