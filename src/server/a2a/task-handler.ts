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
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type {
  A2ARequestHandler,
  PushNotificationSender,
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import type { AgentRuntimeOptions, AgentSource } from '../agent-source.js';
import { HttpError } from '../http-error.js';
import type { SessionStore, TranscriptEntry } from '../session-imports.js';
import { openThread, threadRecord } from '../thread-sessions.js';
import { followTranscript } from '../transcript-follow.js';
import {
  applyEntry,
  contextOfTask,
  INTERRUPTED_STATES,
  newTaskId,
  TASK_PUSH_ENTRY,
  TASK_STATUS_ENTRY,
  type TaskRecord,
  TERMINAL_STATES,
  tasksFromTranscript,
  withHistory,
} from './task-entries.js';
import { agentMessageJson, approvalReplies, messageText, textPart } from './task-messages.js';
import { type ActiveTasks, startTaskTurn, statusJson, type TaskListener } from './task-turn.js';

/** Where push notifications may go. */
export interface PushOptions {
  /** Hosts (`host` or `host:port`) a push notification URL may name; any other is refused. */
  allowedHosts: readonly string[];
}

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
}

/** The principal a call context carries (set by the HTTP layer from the request's auth). */
export function principalOfContext(context: ServerCallContext): string {
  return context.user?.userName ?? 'local';
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
  readonly #sender: PushNotificationSender | undefined;
  /** The push configs of tasks this process carries, for the sender. */
  readonly #pushOf = new Map<string, TaskRecord>();

  constructor(options: TaskHandlerOptions) {
    this.#options = options;
    if (options.push) {
      const records = this.#pushOf;
      const store: PushNotificationStore = {
        save: async () => {},
        delete: async () => {},
        load: async (taskId) =>
          [...(records.get(taskId)?.push.values() ?? [])].map((p) => pushConfig(p.config)),
        loadWithMetadata: async (taskId): Promise<StoredPushNotificationConfig[]> =>
          [...(records.get(taskId)?.push.values() ?? [])].map((p) => ({
            config: pushConfig(p.config),
            wireVersion: p.wireVersion,
          })),
      };
      this.#sender = createLegacyAwarePushNotificationSender(store, { timeout: 5000 });
    }
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
      await running.done;
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
    const principal = principalOfContext(context);
    const contexts = params.contextId
      ? [params.contextId]
      : (await this.#options.store.list()).flatMap((s) => ('error' in s && s.error ? [] : [s.id]));
    const found: Task[] = [];
    for (const id of contexts) {
      const record = await threadRecord(this.#options.store, id, principal).catch(() => null);
      if (record === null) continue;
      const { entries } = await this.#options.store.readTranscript(id);
      for (const task of tasksFromTranscript(id, entries).values()) {
        if (task.principal !== principal) continue;
        if (params.status && task.task.status?.state !== params.status) continue;
        found.push(task.task);
      }
    }
    found.sort((a, b) => (b.status?.timestamp ?? '').localeCompare(a.status?.timestamp ?? ''));
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const offset = params.pageToken ? Number.parseInt(params.pageToken, 10) : 0;
    if (!Number.isInteger(offset) || offset < 0)
      throw new RequestMalformedError('pageToken is not one this server gave');
    const page = found.slice(offset, offset + pageSize).map((task) => {
      const copy = withHistory(task, params.historyLength ?? undefined);
      if (!params.includeArtifacts) copy.artifacts = [];
      return copy;
    });
    return {
      tasks: page,
      nextPageToken: offset + pageSize < found.length ? String(offset + pageSize) : '',
      pageSize,
      totalSize: found.length,
    };
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const { record, contextId } = await this.#record(params.id, context);
    const state = record.task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (TERMINAL_STATES.has(state)) {
      throw new TaskNotCancelableError(`task "${params.id}" is ${stateName(state)} already`);
    }
    const running = this.active.get(contextId);
    if (running && running.taskId === params.id) {
      running.cancelled = true;
      running.agent.interrupt('canceled by the client');
      await running.done;
    } else if (INTERRUPTED_STATES.has(state)) {
      await this.#cancelResting(params.id, contextId, context);
    } else {
      throw new TaskNotCancelableError(
        `task "${params.id}" is running in another process; cancel it on the server that carries it`,
      );
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
    const tasks = new Map<string, TaskRecord>();
    const running = this.active.get(contextId);
    const follow = followTranscript({
      store: this.#options.store,
      sessionId: contextId,
      after: 0,
      ...(running ? { feed: running.feed, local: () => this.active.get(contextId) === running } : {}),
      pollMs: this.#options.pollMs,
    });
    for await (const entry of follow) {
      const before = tasks.get(params.id)?.events.length ?? 0;
      applyEntry(tasks, contextId, entry);
      const now = tasks.get(params.id);
      if (!now) continue;
      for (const { event } of now.events.slice(before)) {
        yield event;
        if (endsStream(event)) return;
      }
    }
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
    const running = this.active.get(contextId);
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
    const waiting = [...tasks.values()].find(
      (t) => t.task.status && INTERRUPTED_STATES.has(t.task.status.state),
    );
    const thread = {
      store: this.#options.store,
      source: this.#options.source,
      runtime: this.#options.runtime,
      principal,
    };
    const text = messageText(message);
    const lastSeq = entries.at(-1)?.seq ?? 0;
    const traceParent = traceparentOf(context);
    const onKept = this.#sender ? this.#push(context) : undefined;
    const push = this.#pushGiven(params, context);
    const taskId = message.taskId || newTaskId(contextId, randomBytes(6).toString('hex'));
    const stamped = Message.fromJSON({ ...(Message.toJSON(message) as object), contextId, taskId });
    if (!message.taskId) {
      if (waiting) {
        throw new UnsupportedOperationError(
          `context "${contextId}" waits for input on task "${waiting.task.id}": send the answer with taskId "${waiting.task.id}"`,
        );
      }
      if (text.trim() === '') throw new RequestMalformedError('message has no text part');
      await startTaskTurn(
        {
          context: thread,
          contextId,
          taskId,
          record: sessionRecord,
          lastSeq,
          message: stamped,
          kind: 'new',
          text,
          ...(traceParent ? { traceParent } : {}),
          ...(listener ? { listener } : {}),
          ...(onKept ? { onKept } : {}),
          ...(push ? { push } : {}),
        },
        this.active,
      );
      return { taskId, contextId, message: stamped };
    }
    const task = tasks.get(message.taskId);
    if (!task || task.principal !== principal) throw new TaskNotFoundError(`no task "${message.taskId}"`);
    const state = task.task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (!INTERRUPTED_STATES.has(state)) {
      throw new UnsupportedOperationError(
        `task "${message.taskId}" is ${stateName(state)}: it takes no message; start a new task (no taskId) in the context`,
      );
    }
    const pending = pendingCalls(task);
    const replies = pending.length > 0 ? approvalReplies(message, pending) : undefined;
    if (!replies && text.trim() === '') throw new RequestMalformedError('message has no text part');
    await startTaskTurn(
      {
        context: thread,
        contextId,
        taskId,
        record: sessionRecord,
        lastSeq,
        message: stamped,
        kind: replies ? 'answers' : 'reply',
        text,
        ...(replies ? { replies } : {}),
        ...(traceParent ? { traceParent } : {}),
        ...(listener ? { listener } : {}),
        ...(onKept ? { onKept } : {}),
        ...(push ? { push } : {}),
      },
      this.active,
    );
    return { taskId, contextId, message: stamped };
  }

  /** The push config a send carries, checked (refused when push is off or its host not allowed). */
  #pushGiven(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): { config: Record<string, unknown>; wireVersion: string } | undefined {
    const given = params.configuration?.taskPushNotificationConfig;
    if (!given?.url) return undefined;
    const allowed = this.#options.push?.allowedHosts;
    if (!allowed) throw new PushNotificationNotSupportedError('this server sends no push notifications');
    checkPushUrl(given.url, allowed);
    const config = TaskPushNotificationConfig.toJSON({ ...given, id: given.id || randomUUID() }) as Record<
      string,
      unknown
    >;
    return { config, wireVersion: context.requestedVersion || '0.3' };
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

  /** Appends a push entry: through the running turn's feed when this process carries the context. */
  async #append(contextId: string, data: Record<string, unknown>): Promise<void> {
    const running = this.active.get(contextId);
    const store = running ? running.feed.store : this.#options.store;
    await store.appendTranscript(contextId, [{ kind: 'event', event: TASK_PUSH_ENTRY, data }]);
  }

  /** Cancels a task resting in input-required: its pending calls interrupted, the task `canceled`. */
  async #cancelResting(taskId: string, contextId: string, context: ServerCallContext): Promise<void> {
    const principal = principalOfContext(context);
    const record = await this.#threadRecord(contextId, principal, taskId);
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
      await this.#options.store.appendTranscript(contextId, [entry]);
      return;
    }
    const agent = await openThread(
      { store: this.#options.store, source: this.#options.source, runtime: this.#options.runtime, principal },
      contextId,
      record,
    );
    try {
      agent.interrupt('canceled by the client');
      await agent.flush();
      await this.#options.store.appendTranscript(contextId, [entry]);
    } finally {
      await agent.close().catch(() => {});
    }
  }

  /** The push sender for a turn's kept events (configs read again from the store at the task's end). */
  #push(context: ServerCallContext): (event: StreamResponse, record: TaskRecord) => void {
    return (event, record) => {
      const taskId = record.task.id;
      this.#pushOf.set(taskId, record);
      const send = async () => {
        if (endsStream(event)) {
          // configs set in another process during the turn are in the store only
          const { entries } = await this.#options.store.readTranscript(record.task.contextId);
          const fresh = tasksFromTranscript(record.task.contextId, entries).get(taskId);
          if (fresh) this.#pushOf.set(taskId, { ...record, push: fresh.push });
        }
        if ((this.#pushOf.get(taskId)?.push.size ?? 0) === 0) return;
        await this.#sender!.send(event, context, record.task);
      };
      void send().catch(() => {});
    };
  }
}

/** Whether an event ends a stream: a terminal or interrupted status. */
function endsStream(event: StreamResponse): boolean {
  if (event.payload?.$case !== 'statusUpdate') return false;
  const state = event.payload.value.status?.state;
  return state !== undefined && (TERMINAL_STATES.has(state) || INTERRUPTED_STATES.has(state));
}

/** The calls a task waits on, from the data parts of its input-required status message. */
function pendingCalls(task: TaskRecord): { toolCallId: string; name: string; args: unknown }[] {
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

function snapshotOf(taskId: string, contextId: string, message: Message | undefined): Task {
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

function pushConfig(json: unknown): TaskPushNotificationConfig {
  return TaskPushNotificationConfig.fromJSON(json);
}

/** Refuses a push URL that is not http(s) or names a host outside `allowed`. */
function checkPushUrl(url: string, allowed: readonly string[]): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RequestMalformedError(`push notification url ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new RequestMalformedError(`push notification url must be http or https, not ${parsed.protocol}`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!allowed.includes(host) && !allowed.includes(parsed.host)) {
    throw new RequestMalformedError(
      `push notification url host "${parsed.host}" is not an allowed host (allowed: ${allowed.join(', ') || 'none'})`,
    );
  }
}

function newContextId(): string {
  return `a2a-${randomUUID()}`;
}

function stateName(state: TaskState): string {
  return (TaskState[state] ?? 'unknown').replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}

/** The caller's `traceparent` header, when it sent a valid one. */
function traceparentOf(context: ServerCallContext): string | undefined {
  const headers = context.state.get('headers') as Record<string, string | string[] | undefined> | undefined;
  const value = headers?.traceparent;
  return typeof value === 'string' && /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(value.trim())
    ? value.trim()
    : undefined;
}
