import { randomBytes, randomUUID } from 'node:crypto';
import {
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk';
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { AgentRuntimeOptions, AgentSource } from '../agent-source.js';
import { HttpError } from '../http-error.js';
import { InboxWakeups } from '../run-cancel-inbox.js';
import type { SessionStore, TranscriptEntry } from '../session-imports.js';
import { threadRecord } from '../thread-sessions.js';
import { cancelRestingTask, cancelThroughInbox } from './task-cancel.js';
import { continuationOf } from './task-continuation.js';
import {
  contextOfTask,
  INTERRUPTED_STATES,
  newTaskId,
  type TaskRecord,
  TERMINAL_STATES,
  tasksFromTranscript,
  withHistory,
} from './task-entries.js';
import { listTasks } from './task-list.js';
import {
  checkPushUrl,
  type PushOptions,
  pushConfig,
  pushGiven,
  TaskPushNotifier,
  writePushEntry,
} from './task-push.js';
import { followTask } from './task-subscribe.js';
import { type ActiveTasks, carriedAtRest, startTaskTurn, type TaskListener } from './task-turn.js';
import {
  endsStream,
  newContextId,
  principalOfContext,
  snapshotOf,
  stateName,
  traceparentOf,
} from './task-views.js';

export type { PushOptions } from './task-push.js';

/** What the task handler serves from. */
export interface TaskHandlerOptions {
  card: AgentCard;
  store: SessionStore;
  source: AgentSource;
  runtime: AgentRuntimeOptions;
  /** How often a subscriber reads the transcript of a task another process carries (ms). */
  pollMs: number;
  /** Push notifications (off without it). */
  push?: PushOptions;
  /** How long a task rests `auth-required` (an MCP server waits for sign-in) before it fails (ms). */
  signInTimeoutMs: number;
  /** How long the next message on such a task waits for a browser that just came back (ms). */
  signInGraceMs: number;
}

/**
 * The A2A operations over agentloop's sessions: a context is a session, a task is a turn, and the
 * task store is the session store (the task's entries in the transcript, task-entries.ts), so every
 * operation works on any process sharing the store. The SDK's JSON-RPC transports (1.0 and 0.3) call
 * it; errors are the SDK's A2A errors, which they map to JSON-RPC codes.
 */
export class SessionTaskHandler implements A2ARequestHandler {
  readonly active: ActiveTasks = new Map();
  readonly #options: TaskHandlerOptions;
  readonly #notifier: TaskPushNotifier | undefined;

  readonly #wakeups: InboxWakeups;

  constructor(options: TaskHandlerOptions) {
    this.#options = options;
    this.#wakeups = new InboxWakeups(options.store);
    if (options.push) this.#notifier = new TaskPushNotifier();
  }

  /** Stops watching the store's inbox (after the tasks carried here have ended). */
  async close(): Promise<void> {
    await this.#wakeups.close();
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.#options.card;
  }

  async getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    _context: ServerCallContext,
  ): Promise<AgentCard> {
    return this.#options.card;
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const { taskId, contextId } = await this.#begin(params, context);
    const running = this.active.get(contextId);
    if (!params.configuration?.returnImmediately && running?.taskId === taskId) {
      await running.untilRest();
      // The task's record here is whole: its earlier entries were read when the turn began, the rest
      // went through this process's feed.
      const record = running.record();
      if (record && record.task.history.length > 0) {
        return withHistory(record.task, params.configuration?.historyLength ?? undefined);
      }
    }
    return withHistory(
      await this.#loadTask(taskId, context),
      params.configuration?.historyLength ?? undefined,
    );
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const queue: { event: StreamResponse; final: boolean }[] = [];
    let wake = () => {};
    const listener: TaskListener = (event, final) => {
      queue.push({ event, final });
      wake();
    };
    const { taskId, contextId, message } = await this.#begin(params, context, listener);
    const started = await this.#loadTask(taskId, context).catch(() => undefined);
    yield {
      payload: {
        $case: 'task',
        value: started ?? snapshotOf(taskId, contextId, message),
      },
    };
    const running = this.active.get(contextId);
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next.event;
        if (next.final || endsStream(next.event)) return;
        continue;
      }
      if (!running || this.active.get(contextId) !== running) {
        if (queue.length === 0) return;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        void running.done.then(() => resolve());
      });
    }
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return withHistory(await this.#loadTask(params.id, context), params.historyLength ?? undefined);
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return listTasks(this.#options.store, params, principalOfContext(context));
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    // A task whose end just went out is let go first: it is then canceled at rest, from the store.
    await carriedAtRest(this.active, contextOfTask(params.id ?? ''));
    const { record, contextId } = await this.#record(params.id, context);
    const state = record.task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (TERMINAL_STATES.has(state)) {
      throw new TaskNotCancelableError(`task "${params.id}" is ${stateName(state)} already`);
    }
    const running = this.active.get(contextId);
    if (running && running.taskId === params.id) {
      running.cancel();
      await running.done;
    } else if (INTERRUPTED_STATES.has(state)) {
      const { store, source, runtime } = this.#options;
      const principal = principalOfContext(context);
      const thread = await this.#threadRecord(contextId, principal, params.id);
      await cancelRestingTask({ store, source, runtime, principal }, params.id, contextId, thread);
    } else {
      const load = () => this.#loadTask(params.id, context);
      return cancelThroughInbox(this.#options.store, contextId, params.id, this.#options.pollMs, load);
    }
    return this.#loadTask(params.id, context);
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const allowed = this.#options.push?.allowedHosts;
    if (!allowed) throw new PushNotificationNotSupportedError('this server sends no push notifications');
    checkPushUrl(params.url, allowed);
    const { contextId } = await this.#record(params.taskId, context);
    const config = TaskPushNotificationConfig.toJSON({ ...params, id: params.id || randomUUID() }) as {
      id: string;
    };
    await this.#append(contextId, {
      taskId: params.taskId,
      config,
      wireVersion: context.requestedVersion || '0.3',
    });
    return pushConfig(config);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const { record } = await this.#record(params.taskId, context);
    const found = record.push.get(params.id);
    if (!found) throw new TaskNotFoundError(`task "${params.taskId}" has no push config "${params.id}"`);
    return pushConfig(found.config);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const { record } = await this.#record(params.taskId, context);
    return { configs: [...record.push.values()].map((p) => pushConfig(p.config)), nextPageToken: '' };
  }

  async deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    const { record, contextId } = await this.#record(params.taskId, context);
    if (!record.push.has(params.id)) {
      throw new TaskNotFoundError(`task "${params.taskId}" has no push config "${params.id}"`);
    }
    await this.#append(contextId, { taskId: params.taskId, deleted: params.id });
  }

  /**
   * The task's events from the transcript (its start as a task, then each kept update), then live
   * until it ends or waits for input: from this process's turn, or read again every `pollMs` when
   * another process carries it.
   */
  async *resubscribe(
    params: { id: string },
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { record, contextId } = await this.#record(params.id, context);
    const state = record.task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (TERMINAL_STATES.has(state)) {
      throw new UnsupportedOperationError(
        `task "${params.id}" is ${stateName(state)}: there is nothing to subscribe to`,
      );
    }
    const first = record.task.history[0];
    yield { payload: { $case: 'task', value: snapshotOf(params.id, contextId, first) } };
    const running = this.active.get(contextId);
    yield* followTask(params.id, contextId, {
      store: this.#options.store,
      pollMs: this.#options.pollMs,
      ...(running ? { feed: running.feed, local: () => this.active.get(contextId) === running } : {}),
    });
  }

  /** Checks a message and starts (or continues) its task's turn in this process. */
  async #begin(
    params: SendMessageRequest,
    context: ServerCallContext,
    listener?: TaskListener,
  ): Promise<{ taskId: string; contextId: string; message: Message }> {
    const message = params.message;
    if (!message) throw new RequestMalformedError('message is required');
    if (message.parts.length === 0) throw new RequestMalformedError('message.parts is empty');
    const principal = principalOfContext(context);
    const contextId =
      message.contextId || (message.taskId && contextOfTask(message.taskId)) || newContextId();
    if (message.taskId && contextOfTask(message.taskId) !== contextId) {
      throw new TaskNotFoundError(`task "${message.taskId}" is not a task of context "${contextId}"`);
    }
    const running = await carriedAtRest(this.active, contextId);
    if (running?.resume && message.taskId === running.taskId) {
      // The task rests `auth-required` here, its sign-in open: the message goes on with it.
      if (running.record()?.principal !== principal)
        throw new TaskNotFoundError(`no task "${message.taskId}"`);
      const stamped = Message.fromJSON({
        ...(Message.toJSON(message) as object),
        contextId,
        taskId: running.taskId,
      });
      await running.resume(stamped, listener);
      return { taskId: running.taskId, contextId, message: stamped };
    }
    if (running) {
      throw new UnsupportedOperationError(
        `context "${contextId}" is running task "${running.taskId}"; wait for it, or cancel it`,
      );
    }
    // A context the server just named has nothing in the store yet: nothing to read.
    const named = !message.contextId && !message.taskId;
    const sessionRecord = named ? undefined : await this.#threadRecord(contextId, principal, message.taskId);
    const { entries } = named ? { entries: [] } : await this.#options.store.readTranscript(contextId);
    const tasks = tasksFromTranscript(contextId, entries);
    const taskId = message.taskId || newTaskId(contextId, randomBytes(6).toString('hex'));
    const stamped = Message.fromJSON({ ...(Message.toJSON(message) as object), contextId, taskId });
    const { text, ...turn } = continuationOf(tasks, message, contextId, principal);
    if (turn.kind !== 'answers' && text.trim() === '')
      throw new RequestMalformedError('message has no text part');
    const traceParent = traceparentOf(context);
    const onKept = this.#notifier?.forTurn(context);
    const push = pushGiven(params, this.#options.push, context.requestedVersion);
    const { store, source, runtime } = this.#options;
    await startTaskTurn(
      {
        ...turn,
        context: { store, source, runtime, principal },
        contextId,
        taskId,
        record: sessionRecord,
        lastSeq: entries.at(-1)?.seq ?? 0,
        message: stamped,
        text,
        ...(traceParent ? { traceParent } : {}),
        ...(listener ? { listener } : {}),
        ...(onKept ? { onKept } : {}),
        ...(push ? { push } : {}),
        startWithTurn: turn.kind === 'new' && !listener && !params.configuration?.returnImmediately,
        // A context the server just named: nobody could have posted to its inbox yet.
        inbox: { pollMs: this.#options.pollMs, wakeups: this.#wakeups, empty: named },
        signInTimeoutMs: this.#options.signInTimeoutMs,
        signInGraceMs: this.#options.signInGraceMs,
      },
      this.active,
    );
    return { taskId, contextId, message: stamped };
  }

  /** The session record of a context, refused as an unknown task when another principal owns it. */
  async #threadRecord(contextId: string, principal: string, taskId: string) {
    try {
      return await threadRecord(this.#options.store, contextId, principal);
    } catch (error) {
      if (error instanceof HttpError && error.status === 403) {
        throw new TaskNotFoundError(taskId ? `no task "${taskId}"` : `no context "${contextId}"`);
      }
      if (error instanceof HttpError && error.status === 400)
        throw new RequestMalformedError(`message.contextId: ${error.message}`);
      throw error;
    }
  }

  /** A task of the caller, from the transcript; another principal's task is not found. */
  async #record(
    taskId: string,
    context: ServerCallContext,
  ): Promise<{ record: TaskRecord; contextId: string }> {
    const contextId = contextOfTask(taskId ?? '');
    if (!contextId) throw new TaskNotFoundError(`no task "${taskId}"`);
    const principal = principalOfContext(context);
    await this.#threadRecord(contextId, principal, taskId);
    let entries: TranscriptEntry[];
    try {
      ({ entries } = await this.#options.store.readTranscript(contextId));
    } catch {
      throw new TaskNotFoundError(`no task "${taskId}"`);
    }
    const record = tasksFromTranscript(contextId, entries).get(taskId);
    if (!record || record.principal !== principal) throw new TaskNotFoundError(`no task "${taskId}"`);
    return { record, contextId };
  }

  async #loadTask(taskId: string, context: ServerCallContext): Promise<Task> {
    return (await this.#record(taskId, context)).record.task;
  }

  /** Writes a push entry by the session's one writer (task-push.ts). */
  async #append(contextId: string, data: Record<string, unknown>): Promise<void> {
    const { store, pollMs } = this.#options;
    await writePushEntry(store, this.active.get(contextId)?.feed, contextId, data, pollMs);
  }
}
