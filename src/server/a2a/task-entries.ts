import { Artifact, Message, type StreamResponse, Task, TaskState, TaskStatus } from '@a2a-js/sdk';
import type { TranscriptEntry } from '../session-imports.js';

// A2A tasks live in the session's transcript (the task store is the session store): these entries,
// written by the process carrying the turn, are what `tasks/get`, `tasks/list`, subscribe and push
// read, on any process sharing the store. Their data is A2A 1.0 JSON (the SDK's `toJSON` form).

/** A task began: `{ taskId, principal, message }` (the user's message). */
export const TASK_ENTRY = 'a2a_task';
/** A message on a waiting task (an approval answer, a reply to a question): `{ taskId, message }`. */
export const TASK_MESSAGE_ENTRY = 'a2a_message';
/** The task's status changed: `{ taskId, status }`. */
export const TASK_STATUS_ENTRY = 'a2a_status';
/** An artifact of the task (the answer): `{ taskId, artifact }`. */
export const TASK_ARTIFACT_ENTRY = 'a2a_artifact';
/** A push notification config was set (`config`, `wireVersion`) or deleted (`deleted`: its id). */
export const TASK_PUSH_ENTRY = 'a2a_push';

/** States after which a task takes no more messages. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** States a task rests in until the client sends the next message on it. */
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

/** The separator between the context (session) id and a task's own part: never in a session id. */
const TASK_SEPARATOR = '~';

/** A new task id for a context: the session id, `~`, random hex (so a task id names its session). */
export function newTaskId(contextId: string, random: string): string {
  return `${contextId}${TASK_SEPARATOR}${random}`;
}

/** The context (session) a task id names, or undefined when it is not one of ours. */
export function contextOfTask(taskId: string): string | undefined {
  const at = taskId.lastIndexOf(TASK_SEPARATOR);
  return at > 0 ? taskId.slice(0, at) : undefined;
}

/** One task as the transcript tells it, with the seq of each of its entries. */
export interface TaskRecord {
  task: Task;
  principal: string;
  /** The task's events in order, as a subscriber gets them (status and artifact updates). */
  events: { seq: number; event: StreamResponse }[];
  /** Push configs by id, with the protocol version they were set in. */
  push: Map<string, { config: unknown; wireVersion: string }>;
}

interface EntryData {
  taskId?: string;
  principal?: string;
  message?: unknown;
  status?: unknown;
  artifact?: unknown;
  config?: { id?: string };
  wireVersion?: string;
  deleted?: string;
}

/**
 * Folds a session's transcript into its tasks (by id, in the order they began). Entries of other
 * kinds, and A2A entries for unknown tasks, are passed over.
 */
export function tasksFromTranscript(
  contextId: string,
  entries: readonly TranscriptEntry[],
): Map<string, TaskRecord> {
  const tasks = new Map<string, TaskRecord>();
  for (const entry of entries) applyEntry(tasks, contextId, entry);
  return tasks;
}

/** Applies one transcript entry to the tasks it may change. */
export function applyEntry(tasks: Map<string, TaskRecord>, contextId: string, entry: TranscriptEntry): void {
  if (entry.kind !== 'event' || !entry.event.startsWith('a2a_')) return;
  const data = (entry.data ?? {}) as EntryData;
  if (typeof data.taskId !== 'string') return;
  if (entry.event === TASK_ENTRY) {
    const message = Message.fromJSON(data.message ?? {});
    tasks.set(data.taskId, {
      task: Task.fromJSON({
        id: data.taskId,
        contextId,
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: entry.at },
        history: [Message.toJSON(message)],
      }),
      principal: typeof data.principal === 'string' ? data.principal : 'local',
      events: [],
      push: new Map(),
    });
    return;
  }
  const record = tasks.get(data.taskId);
  if (!record) return;
  const { task } = record;
  if (entry.event === TASK_MESSAGE_ENTRY) {
    task.history.push(Message.fromJSON(data.message ?? {}));
  } else if (entry.event === TASK_STATUS_ENTRY) {
    const status = TaskStatus.fromJSON(data.status ?? {});
    task.status = status;
    if (status.message) task.history.push(status.message);
    record.events.push({
      seq: entry.seq,
      event: {
        payload: {
          $case: 'statusUpdate',
          value: { taskId: task.id, contextId, status, metadata: undefined },
        },
      },
    });
  } else if (entry.event === TASK_ARTIFACT_ENTRY) {
    const artifact = Artifact.fromJSON(data.artifact ?? {});
    const at = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
    if (at >= 0) task.artifacts[at] = artifact;
    else task.artifacts.push(artifact);
    record.events.push({
      seq: entry.seq,
      event: {
        payload: {
          $case: 'artifactUpdate',
          value: {
            taskId: task.id,
            contextId,
            artifact,
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      },
    });
  } else if (entry.event === TASK_PUSH_ENTRY) {
    if (typeof data.deleted === 'string') record.push.delete(data.deleted);
    else if (data.config && typeof data.config.id === 'string') {
      record.push.set(data.config.id, {
        config: { ...data.config, taskId: data.taskId },
        wireVersion: data.wireVersion ?? '1.0',
      });
    }
  }
}

/** A copy of a task with at most `historyLength` of its latest messages (all when undefined). */
export function withHistory(task: Task, historyLength: number | undefined): Task {
  const copy = Task.fromJSON(Task.toJSON(task));
  if (historyLength !== undefined)
    copy.history = historyLength <= 0 ? [] : copy.history.slice(-historyLength);
  return copy;
}
