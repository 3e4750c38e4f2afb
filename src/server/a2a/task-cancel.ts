import { type Task, TaskState, TaskStatus } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { cancelReason } from '../run-cancel-inbox.js';
import type { SessionRecord, SessionStore } from '../session-imports.js';
import { hasInbox } from '../session-imports.js';
import { openThread, type ThreadContext } from '../thread-sessions.js';
import { TASK_STATUS_ENTRY } from './task-entries.js';
import { agentMessageJson, textPart } from './task-messages.js';

/** How long a cancel posted for another process waits to see the task leave `working`. */
const CANCEL_WAIT_MS = 10_000;

/**
 * Cancels a task carried by another process sharing the store (or by none: its process died and the
 * next to take the session over hears it): an interrupt naming the task is posted to the session's
 * inbox, and the carrier interrupts the turn when it hears it (run-cancel-inbox.ts). Answers the task
 * once it has left `working`, or as it stands after `CANCEL_WAIT_MS`: what it is, not what it will be.
 */
export async function cancelThroughInbox(
  store: SessionStore,
  contextId: string,
  taskId: string,
  pollMs: number,
  load: () => Promise<Task>,
): Promise<Task> {
  if (!hasInbox(store)) {
    throw new TaskNotCancelableError(
      `task "${taskId}" is running in another process, and this store has no inbox to reach it through`,
    );
  }
  await store.postInbox(contextId, { kind: 'interrupt', reason: cancelReason(taskId) });
  const until = Date.now() + CANCEL_WAIT_MS;
  for (;;) {
    const task = await load();
    const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (state !== TaskState.TASK_STATE_WORKING || Date.now() >= until) return task;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The status of a task as JSON for its entries (used by cancel of a resting task). */
export function statusJson(state: string, message?: Record<string, unknown>): unknown {
  return TaskStatus.toJSON(
    TaskStatus.fromJSON({ state, timestamp: new Date().toISOString(), ...(message ? { message } : {}) }),
  );
}

/**
 * Cancels a task resting in `input-required` (no process carries it): a session waiting for approval
 * is opened and interrupted (its pending calls answered `interrupted`), and the task ends `canceled`.
 */
export async function cancelRestingTask(
  context: ThreadContext,
  taskId: string,
  contextId: string,
  record: SessionRecord | undefined,
): Promise<void> {
  const entry = {
    kind: 'event' as const,
    event: TASK_STATUS_ENTRY,
    data: {
      taskId,
      status: statusJson(
        'TASK_STATE_CANCELED',
        agentMessageJson(contextId, taskId, [textPart('canceled by the client')]),
      ),
    },
  };
  if (record?.state !== 'WaitingApproval') {
    await context.store.appendTranscript(contextId, [entry]);
    return;
  }
  const agent = await openThread(context, contextId, record);
  try {
    agent.interrupt('canceled by the client');
    await agent.flush();
    await context.store.appendTranscript(contextId, [entry]);
  } finally {
    await agent.close().catch(() => {});
  }
}
