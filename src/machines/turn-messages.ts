import type { AnyActorRef } from 'xstate';
import type { Message, Usage } from '../llm/message.js';
import type { ToolCallRequest } from '../tools/tool-call.js';
import { workCounts } from '../work-counters.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentContext } from './agent-context.js';
import { effectsOf } from './agent-effects.js';
import type { AgentEvent, AgentEventMap, AgentEventType } from './emitted-events.js';
import { callInfo, runnerIdFor, type ToolBatch } from './tool-batch.js';

// Pure helpers the machine's actions share: building events and the messages a turn appends.

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
  workCounts.events++;
  return { type, ...meta(context), ...payload } as unknown as AgentEvent<K>;
}

/**
 * Whether anyone listens to `type` on this agent (`self`, the agent actor): an event nobody hears is
 * not built. An actor without bound effects (a test's pure transition) hears everything.
 */
export function hears(self: AnyActorRef, type: AgentEventType): boolean {
  return effectsOf(self)?.hears?.(type) ?? true;
}

/**
 * When a model call ends before its stream did (interrupt, deadline, error): the text streamed so far,
 * marked, and the calls already started from it, as one assistant message. Empty outside Thinking.
 */
export function unfinishedStream(context: AgentContext, marker: string): Message[] {
  const { calls } = context.batch;
  if (context.lastState !== 'Thinking' || (!context.partial && calls.length === 0)) return [];
  const message: Message = {
    role: 'assistant',
    content: context.partial ? `${context.partial} ${marker}` : null,
  };
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.argsText },
    }));
  }
  return [message];
}

/** The input of a tool runner for `calls` of the current turn. */
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
 * The actor id for a new runner of `batch` (`runnerIdFor`), clear of the batch's runners and of every
 * live child of the agent. A machine stepped without a running actor (a graph walk, a pure
 * `transition`) has no snapshot to read: only the batch's runners are avoided then.
 */
export function newRunnerId(self: AnyActorRef, batch: ToolBatch): string {
  const children = (self.getSnapshot() as { children?: Record<string, unknown> } | undefined)?.children;
  return runnerIdFor(batch, children ?? {});
}

/** A `tool_call_start` event per call, for those who listen. */
export function startEvents(self: AnyActorRef, context: AgentContext, calls: ToolCallRequest[]) {
  if (!hears(self, 'tool_call_start')) return [];
  return calls.map((call) => event(context, 'tool_call_start', callInfo(call)));
}

/**
 * The sum of two usages. A cost is known only while every call's was: one call of unknown cost (a
 * model without a price, a reply without usage) makes the sum unknown, never too small.
 */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  const cached = (a.cachedPromptTokens ?? 0) + (b.cachedPromptTokens ?? 0);
  if (cached > 0) sum.cachedPromptTokens = cached;
  if (a.costUsd !== undefined && b.costUsd !== undefined) sum.costUsd = a.costUsd + b.costUsd;
  return sum;
}

/** The usage of a reply that reported none: no tokens counted, and its cost unknown. */
export const UNREPORTED_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
