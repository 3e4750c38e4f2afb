import { type BaseEvent, EventType, type Interrupt, type TokenUsage } from '@ag-ui/core';
import type { AgentEvent, ToolCallInfo } from '../../machines/emitted-events.js';

// AG-UI events built from agentloop's own values. One function an event shape, so the mapping from
// the bus (run-event-mapper.ts) reads as a table.

/** The reason an approval interrupt carries. */
export const APPROVAL_REASON = 'tool_approval';

/** The answer an approval interrupt expects in `resume[].payload`. */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    approved: { type: 'boolean', description: 'true runs the call; false declines it' },
    reason: { type: 'string', description: 'why it was declined (told to the model)' },
    always: { type: 'boolean', description: 'approve every call of this tool for the rest of the session' },
  },
  required: ['approved'],
  additionalProperties: false,
} as const;

/** The id of the interrupt that asks to approve `toolCallId`. */
export function approvalInterruptId(toolCallId: string): string {
  return `approval-${toolCallId}`;
}

/** The interrupt for one call waiting for approval. */
export function approvalInterrupt(call: ToolCallInfo): Interrupt {
  return {
    id: approvalInterruptId(call.toolCallId),
    reason: APPROVAL_REASON,
    message: `Approve the call to ${call.name}?`,
    toolCallId: call.toolCallId,
    responseSchema: APPROVAL_RESPONSE_SCHEMA,
    metadata: { toolName: call.name, args: call.args },
  };
}

/** Token usage by model in AG-UI's accounting (inputs include cached; totals are the sum). */
export function tokenUsage(
  byModel: ReadonlyMap<string, { input: number; output: number; cached: number }>,
): TokenUsage[] {
  return [...byModel].map(([model, u]) => ({
    ...(model ? { model } : {}),
    inputTokens: u.input,
    outputTokens: u.output,
    totalTokens: u.input + u.output,
    ...(u.cached > 0 ? { cachedInputTokens: u.cached } : {}),
  }));
}

/** A text message sent whole (not streamed): start, content, end. */
export function wholeTextMessage(messageId: string, text: string, timestamp: number): BaseEvent[] {
  const events: BaseEvent[] = [
    { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', timestamp },
  ];
  if (text !== '') events.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text, timestamp });
  events.push({ type: EventType.TEXT_MESSAGE_END, messageId, timestamp });
  return events;
}

/** One tool call as the model made it: start (under its assistant message), the arguments, end. */
export function toolCallEvents(
  call: { id: string; name: string; arguments: string },
  parentMessageId: string,
  timestamp: number,
): BaseEvent[] {
  return [
    {
      type: EventType.TOOL_CALL_START,
      toolCallId: call.id,
      toolCallName: call.name,
      parentMessageId,
      timestamp,
    },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: call.arguments, timestamp },
    { type: EventType.TOOL_CALL_END, toolCallId: call.id, timestamp },
  ];
}

/** The `activityType` of a tool's progress (`ACTIVITY_SNAPSHOT`). */
export const TOOL_PROGRESS_ACTIVITY = 'tool_progress';

/**
 * A tool's progress report as an AG-UI activity: `ACTIVITY_SNAPSHOT` is the event AG-UI has for
 * progress that is not conversation content. One activity message per call (`progress-<call id>`),
 * each report replacing the last (a snapshot: the call's progress as it stands now).
 */
export function toolActivity(event: AgentEvent<'tool_progress'>, scrub: (text: string) => string): BaseEvent {
  const content: Record<string, unknown> = { toolCallId: event.toolCallId, toolName: event.name };
  if (event.message !== undefined) content.message = scrub(event.message);
  if (event.progress !== undefined) content.progress = event.progress;
  if (event.total !== undefined) content.total = event.total;
  if (event.data !== undefined) content.data = event.data;
  return {
    type: EventType.ACTIVITY_SNAPSHOT,
    messageId: `progress-${event.toolCallId}`,
    activityType: TOOL_PROGRESS_ACTIVITY,
    content,
    timestamp: event.timestamp,
  } as BaseEvent;
}
