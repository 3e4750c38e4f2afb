import { randomUUID } from 'node:crypto';
import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { INTERRUPTED_STATES, type TaskRecord, TERMINAL_STATES } from './task-entries.js';

// Small views of tasks the handler answers with: what ends a stream, the calls a task waits on, the
// task as it began, state names for messages, the caller's principal and trace context.

/** The principal a call context carries (set by the HTTP layer from the request's auth). */
export function principalOfContext(context: ServerCallContext): string {
  return context.user?.userName ?? 'local';
}

/** Whether an event ends a stream: a terminal or interrupted status. */
export function endsStream(event: StreamResponse): boolean {
  if (event.payload?.$case !== 'statusUpdate') return false;
  const state = event.payload.value.status?.state;
  return state !== undefined && (TERMINAL_STATES.has(state) || INTERRUPTED_STATES.has(state));
}

/** The calls a task waits on, from the data parts of its input-required status message. */
export function pendingCalls(task: TaskRecord): { toolCallId: string; name: string; args: unknown }[] {
  const message = task.task.status?.message;
  if (!message) return [];
  return message.parts.flatMap((part) => {
    if (part.content?.$case !== 'data') return [];
    const value = part.content.value as {
      type?: string;
      toolCallId?: string;
      toolName?: string;
      args?: unknown;
    };
    return value?.type === 'approval_request' && typeof value.toolCallId === 'string'
      ? [{ toolCallId: value.toolCallId, name: value.toolName ?? '', args: value.args }]
      : [];
  });
}

export function snapshotOf(taskId: string, contextId: string, message: Message | undefined): Task {
  return {
    id: taskId,
    contextId,
    status: {
      state: TaskState.TASK_STATE_SUBMITTED,
      message: undefined,
      timestamp: new Date().toISOString(),
    },
    artifacts: [],
    history: message ? [message] : [],
    metadata: undefined,
  };
}

export function newContextId(): string {
  return `a2a-${randomUUID()}`;
}

export function stateName(state: TaskState): string {
  return (TaskState[state] ?? 'unknown').replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}

/** The caller's `traceparent` header, when it sent a valid one. */
export function traceparentOf(context: ServerCallContext): string | undefined {
  const headers = context.state.get('headers') as Record<string, string | string[] | undefined> | undefined;
  const value = headers?.traceparent;
  return typeof value === 'string' && /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(value.trim())
    ? value.trim()
    : undefined;
}
