import { type Task, TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { cancelReason } from '../run-cancel-inbox.js';
import type { SessionStore } from '../session-imports.js';
import { hasInbox } from '../session-imports.js';

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
