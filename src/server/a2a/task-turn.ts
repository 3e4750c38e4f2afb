import { Artifact, Message, type StreamResponse, TaskStatus } from '@a2a-js/sdk';
import type { Agent } from '../../agent/agent.js';
import type { AgentEvent, TerminateReason } from '../../machines/emitted-events.js';
import { scrubForClient } from '../client-text.js';
import { type InboxWakeups, watchCancels } from '../run-cancel-inbox.js';
import type { SessionRecord, TranscriptEntryInput } from '../session-imports.js';
import { openThread, type ThreadContext } from '../thread-sessions.js';
import { TranscriptFeed } from '../transcript-feed.js';
import {
  applyEntry,
  TASK_ARTIFACT_ENTRY,
  TASK_ENTRY,
  TASK_MESSAGE_ENTRY,
  TASK_PUSH_ENTRY,
  TASK_STATUS_ENTRY,
  type TaskRecord,
} from './task-entries.js';
import { type ApprovalReply, agentMessageJson, approvalPart, textPart } from './task-messages.js';

/** A task (a turn) this process is carrying. */
export interface ActiveTask {
  taskId: string;
  contextId: string;
  agent: Agent;
  feed: TranscriptFeed;
  cancelled: boolean;
  /** Resolves once the turn rests and its session is let go. */
  done: Promise<void>;
  /** The task as this process wrote it (whole once `done`: no store read needed to answer a send). */
  record(): TaskRecord | undefined;
  /** Hears the task's events as they happen (kept ones once durable, text chunks at once); `final` on the last. */
  listen(listener: TaskListener): () => void;
}

export type TaskListener = (event: StreamResponse, final: boolean) => void;

/** Tasks by context (session) id, in this process. */
export type ActiveTasks = Map<string, ActiveTask>;

/** What starts or continues a task's turn. */
export interface TaskTurn {
  context: ThreadContext;
  contextId: string;
  taskId: string;
  record: SessionRecord | undefined;
  /** The transcript's last seq when the request was read. */
  lastSeq: number;
  /** The client's message, with its context and task ids set. */
  message: Message;
  /** `new`: a new task; `answers`: approval replies; `reply`: a reply to the question the task asked. */
  kind: 'new' | 'answers' | 'reply';
  text: string;
  replies?: ApprovalReply[];
  traceParent?: string;
  /** A push config given with the message (`configuration.taskPushNotificationConfig`), checked. */
  push?: { config: Record<string, unknown>; wireVersion: string };
  /** Hears the task's events from the start (the caller of a streaming send). */
  listener?: TaskListener;
  /** Called for every kept event of the task (push notifications). */
  onKept?: (event: StreamResponse, record: TaskRecord) => void;
  /**
   * Write a new task's start with the agent's first append instead of before the turn: for a send that
   * waits for the end (no one else knows the task's id before it is durable).
   */
  startWithTurn?: boolean;
  /** Hears cancels posted to the session's inbox by other processes (none: cancels reach only this one). */
  inbox?: { pollMs: number; wakeups: InboxWakeups; empty?: boolean };
}

/**
 * Starts (or continues) a task's turn in this process: the session opened with its lease, the task's
 * entries written to the transcript, the message sent (or the approvals answered), and the turn's
 * end written as the task's status: `completed` (the answer also as the artifact `answer`),
 * `input-required` (a data part per call waiting for approval, or the agent's question), `canceled`
 * after a cancel, `failed` naming the reason. Resolves once the task's first entries are durable
 * (with `startWithTurn`, once the turn has begun: they go out with the agent's first append).
 */
export async function startTaskTurn(turn: TaskTurn, active: ActiveTasks): Promise<ActiveTask> {
  const { context, contextId, taskId } = turn;
  const feed = new TranscriptFeed(context.store, contextId, turn.lastSeq);
  const listeners = new Set<TaskListener>(turn.listener ? [turn.listener] : []);
  const tasks = new Map<string, TaskRecord>();
  let release!: () => void;
  const task: ActiveTask = {
    taskId,
    contextId,
    agent: undefined as unknown as Agent,
    feed,
    cancelled: false,
    done: new Promise((resolve) => (release = resolve)),
    record: () => tasks.get(taskId),
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const emit = (event: StreamResponse, final: boolean) => {
    for (const listener of listeners) listener(event, final);
  };
  active.set(contextId, task);
  let agent: Agent;
  try {
    agent = await openThread({ ...context, store: feed.store }, contextId, turn.record);
  } catch (error) {
    active.delete(contextId);
    release();
    throw error;
  }
  task.agent = agent;
  // A cancel sent to another process sharing the store reaches this one through the session's inbox.
  const stopCancels = turn.inbox
    ? watchCancels(
        context.store,
        contextId,
        taskId,
        () => {
          task.cancelled = true;
          agent.interrupt('canceled by the client');
        },
        turn.inbox,
      )
    : () => {};
  if (turn.kind !== 'new') {
    // The task's earlier entries, so that its record (history, push configs) is whole here.
    const { entries } = await context.store.readTranscript(contextId);
    for (const entry of entries) applyEntry(tasks, contextId, entry);
  }
  let finalSeq = Number.POSITIVE_INFINITY;
  feed.listen((entries) => {
    for (const entry of entries) {
      const record = tasks.get(taskId);
      const before = record?.events.length ?? 0;
      applyEntry(tasks, contextId, entry);
      const after = tasks.get(taskId);
      if (!after) continue;
      for (const { event } of after.events.slice(before)) {
        emit(event, entry.seq >= finalSeq);
        turn.onKept?.(event, after);
      }
    }
  });
  const scrub = (text: string) => scrubForClient(text, agent.redactor.redact);
  const status = (state: string, parts?: Record<string, unknown>[]) => ({
    kind: 'event' as const,
    event: TASK_STATUS_ENTRY,
    data: {
      taskId,
      status: {
        state,
        timestamp: new Date().toISOString(),
        ...(parts ? { message: agentMessageJson(contextId, taskId, parts) } : {}),
      },
    },
  });
  const messageJson = Message.toJSON(turn.message);
  const startEntries: TranscriptEntryInput[] = [
    turn.kind === 'new'
      ? {
          kind: 'event',
          event: TASK_ENTRY,
          data: { taskId, principal: context.principal, message: messageJson },
        }
      : { kind: 'event', event: TASK_MESSAGE_ENTRY, data: { taskId, message: messageJson } },
    ...(turn.push
      ? [{ kind: 'event' as const, event: TASK_PUSH_ENTRY, data: { taskId, ...turn.push } }]
      : []),
    status('TASK_STATE_WORKING'),
  ];
  // A caller that waits for the whole turn gets the task's start in the agent's first append (one
  // durable write fewer); a stream or a send that returns at once gets it on its own, durable first.
  if (turn.startWithTurn) void feed.hold(startEntries);
  else await feed.store.appendTranscript(contextId, startEntries);

  // The turn's end is held as it happens, to go out after the entries the agent writes at its rest
  // point, in the same durable write (or on its own after them: `writeHeld` below).
  let endTurn!: (end: TurnEnd) => void;
  const ended = new Promise<void>((resolve) => {
    endTurn = (end) => {
      const last = endEntries(end, agent, task.cancelled, scrub, status, taskId);
      void feed.hold(last, { after: true, stamped: (seq) => (finalSeq = seq) });
      resolve();
    };
    const off = agent.on('*', (event: AgentEvent) => {
      if (event.type === 'content_chunk') {
        emit(chunkEvent(taskId, contextId, scrub(event.delta)), false);
      } else if (event.type === 'state_change' && event.state === 'WaitingApproval') {
        off();
        endTurn({ reason: 'waiting', response: '' });
      } else if (event.type === 'turn_end') {
        off();
        endTurn({ reason: event.terminateReason, response: event.response });
      }
    });
  });
  const run = async () => {
    try {
      if (turn.kind === 'answers') {
        for (const reply of turn.replies ?? []) {
          if (reply.approved) agent.approve(reply.toolCallId);
          else agent.reject(reply.toolCallId, reply.reason);
        }
        // Calls still waiting (only some were answered): the task asks for them again.
        if (agent.state === 'WaitingApproval') endTurn({ reason: 'waiting', response: '' });
      } else {
        agent
          .send(turn.text, turn.traceParent ? { traceParent: turn.traceParent } : {})
          .catch((error: unknown) => agent.interrupt(String(error)));
      }
      await ended;
      await agent.flush();
      await feed.writeHeld();
      await feed.settled();
    } finally {
      stopCancels();
      await feed.writeHeld().catch(() => {}); // the task's start, when the turn failed before any append
      try {
        await agent.close();
      } catch {
        // the agent reported its own write failures on its bus; the session keeps its last rest point
      } finally {
        active.delete(contextId);
        listeners.clear();
        release();
      }
    }
  };
  void run();
  await feed.settled();
  return task;
}

/** How a task's turn ended: the agent's reason (or waiting for approval) and its answer. */
type TurnEnd = { reason: TerminateReason | 'waiting'; response: string };

/** The entries that end a task's turn: the answer artifact (when completed) and the final status. */
function endEntries(
  end: TurnEnd,
  agent: Agent,
  cancelled: boolean,
  scrub: (text: string) => string,
  status: (
    state: string,
    parts?: Record<string, unknown>[],
  ) => {
    kind: 'event';
    event: string;
    data: unknown;
  },
  taskId: string,
): { kind: 'event'; event: string; data: unknown }[] {
  if (end.reason === 'waiting') {
    const pending = agent.pendingApprovals;
    const names = pending.map((call) => call.name).join(', ');
    return [
      status('TASK_STATE_INPUT_REQUIRED', [
        textPart(`approval needed for ${pending.length} tool call(s): ${names}`),
        ...pending.map((call) => approvalPart({ ...call, args: scrubArgs(call.args, scrub) })),
      ]),
    ];
  }
  const text = scrub(end.response);
  switch (end.reason) {
    case 'completed':
      return [
        {
          kind: 'event',
          event: TASK_ARTIFACT_ENTRY,
          data: {
            taskId,
            artifact: Artifact.toJSON(
              Artifact.fromJSON({ artifactId: `${taskId}-answer`, name: 'answer', parts: [textPart(text)] }),
            ),
          },
        },
        status('TASK_STATE_COMPLETED', [textPart(text)]),
      ];
    case 'question':
      return [status('TASK_STATE_INPUT_REQUIRED', [textPart(text)])];
    case 'interrupted':
      return [
        status(cancelled ? 'TASK_STATE_CANCELED' : 'TASK_STATE_FAILED', [
          textPart(cancelled ? 'canceled by the client' : 'interrupted'),
        ]),
      ];
    default:
      return [
        status('TASK_STATE_FAILED', [textPart(`the turn ended: ${end.reason}${text ? ` (${text})` : ''}`)]),
      ];
  }
}

function scrubArgs(args: unknown, scrub: (text: string) => string): unknown {
  try {
    return JSON.parse(scrub(JSON.stringify(args ?? null)));
  } catch {
    return scrub(String(args));
  }
}

/** A streamed piece of the answer: appended to the artifact `answer` (not kept; the whole answer is). */
function chunkEvent(taskId: string, contextId: string, delta: string): StreamResponse {
  return {
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId,
        contextId,
        artifact: Artifact.fromJSON({
          artifactId: `${taskId}-answer`,
          name: 'answer',
          parts: [textPart(delta)],
        }),
        append: true,
        lastChunk: false,
        metadata: undefined,
      },
    },
  };
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
