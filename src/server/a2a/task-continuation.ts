import { type Message, TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { INTERRUPTED_STATES, type TaskRecord } from './task-entries.js';
import { approvalReplies, messageText } from './task-messages.js';
import type { TaskTurn } from './task-turn.js';
import { pendingCalls, stateName } from './task-views.js';

/**
 * What a message starts or continues in its context, from the context's tasks: a new task (refused
 * while another waits for input), approval answers, a reply to the task's question, or the next
 * message on a task resting `auth-required` (then `text` is the task's first message). Refuses a
 * task of another principal (not found) and one that takes no message.
 */
export function continuationOf(
  tasks: ReadonlyMap<string, TaskRecord>,
  message: Message,
  contextId: string,
  principal: string,
): Pick<TaskTurn, 'kind' | 'replies' | 'text'> {
  const text = messageText(message);
  if (!message.taskId) {
    const waiting = [...tasks.values()].find(
      (t) => t.task.status && INTERRUPTED_STATES.has(t.task.status.state),
    );
    if (waiting) {
      throw new UnsupportedOperationError(
        `context "${contextId}" waits for input on task "${waiting.task.id}": send the answer with taskId "${waiting.task.id}"`,
      );
    }
    return { kind: 'new', text };
  }
  const task = tasks.get(message.taskId);
  if (!task || task.principal !== principal) throw new TaskNotFoundError(`no task "${message.taskId}"`);
  const state = task.task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  if (!INTERRUPTED_STATES.has(state)) {
    throw new UnsupportedOperationError(
      `task "${message.taskId}" is ${stateName(state)}: it takes no message; start a new task (no taskId) in the context`,
    );
  }
  if (state === TaskState.TASK_STATE_AUTH_REQUIRED) {
    // No process holds its sign-in: the task's first message is sent if every server is signed in now.
    const asked = task.task.history[0];
    return { kind: 'signin', text: asked ? messageText(asked) : '' };
  }
  const pending = pendingCalls(task);
  const replies = pending.length > 0 ? approvalReplies(message, pending) : undefined;
  return replies ? { kind: 'answers', replies, text } : { kind: 'reply', text };
}
