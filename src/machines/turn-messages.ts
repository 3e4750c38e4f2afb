import type { Message } from '../llm/message.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentContext } from './agent-context.js';
import type { AgentEvent, AgentEventMap, AgentEventType } from './emitted-events.js';

// Pure helpers the machine's actions share: building events and the messages a turn appends.

/**
 * The context fields of an empty batch: set when a batch is answered or abandoned. Sharing the empty
 * values is safe because the context is never changed in place.
 */
export const NO_BATCH: Pick<AgentContext, 'calls' | 'results' | 'pending' | 'started'> = {
  calls: [],
  results: {},
  pending: [],
  started: [],
};

/** The common fields of every emitted event. */
export function meta(context: AgentContext) {
  return {
    sessionId: context.sessionId,
    turn: context.turn,
    iteration: context.iteration,
    timestamp: Date.now(),
  };
}

/** Builds one emitted event from the context and its payload. */
export function event<K extends AgentEventType>(
  context: AgentContext,
  type: K,
  payload: AgentEventMap[K],
): AgentEvent<K> {
  return { type, ...meta(context), ...payload } as unknown as AgentEvent<K>;
}

export function toolMessage(result: ToolResult): Message {
  return { role: 'tool', tool_call_id: result.toolCallId, content: result.content };
}

export function syntheticResult(call: ToolCallRequest, content: string): ToolResult {
  return { toolCallId: call.id, name: call.name, content, isError: true, durationMs: 0 };
}

/** Tool messages for every call of the batch, in call order, answering unanswered calls with `fallback`. */
export function batchMessages(context: AgentContext, fallback: string): Message[] {
  return context.calls.map((call) =>
    toolMessage(context.results[call.id] ?? syntheticResult(call, fallback)),
  );
}

/**
 * When a model call ends before its stream did (interrupt, deadline, error): the text streamed so far,
 * marked, and the calls already started from it, as one assistant message. Empty outside Thinking.
 */
export function unfinishedStream(context: AgentContext, marker: string): Message[] {
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

export const batchComplete = (context: AgentContext) =>
  context.calls.length > 0 && context.calls.every((call) => context.results[call.id] !== undefined);

export const loopBreaker = (context: AgentContext) =>
  context.calls.find(
    (call) => call.loopBreaking && context.results[call.id] && !context.results[call.id]!.isError,
  );

export function runInput(context: AgentContext, calls: ToolCallRequest[]): RunToolsInput {
  return {
    sessionId: context.sessionId,
    turn: context.turn,
    iteration: context.iteration,
    calls,
    deadline: context.deadline,
  };
}

/**
 * The id of the runner actor for `calls`: `tools:` and the call ids, comma-separated. The id names the
 * calls so that the runner's done or error event says which calls it answers.
 */
export function runnerId(calls: ToolCallRequest[]): string {
  return `tools:${calls.map((c) => c.id).join(',')}`;
}

/** The call ids a runner actor runs, from its id (see `runnerId`); none for other actors. */
export function runnerCalls(actorId: string): string[] {
  return actorId.startsWith('tools:') ? actorId.slice('tools:'.length).split(',') : [];
}

/**
 * What handing `calls` to a new runner takes: the runner's id and input, and a `tool_call_start` event
 * per call. The start is announced as the runner is spawned, in the same machine step: a runner
 * sending a start event of its own would cost every call one more step.
 */
export function runnerStart(context: AgentContext, calls: ToolCallRequest[]) {
  return {
    id: runnerId(calls),
    input: runInput(context, calls),
    starts: calls.map((call) => event(context, 'tool_call_start', callInfo(call))),
  };
}

export function callInfo(call: ToolCallRequest) {
  return { toolCallId: call.id, name: call.name, args: call.args ?? call.argsText };
}

export function addUsage(a: AgentEventMap['usage']['usage'], b: AgentEventMap['usage']['usage']) {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
