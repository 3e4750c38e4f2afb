import { Artifact, Message, type StreamResponse } from '@a2a-js/sdk';
import type { Agent } from '../../agent/agent.js';
import type { AgentEvent, TerminateReason } from '../../machines/emitted-events.js';
import { scrubForClient } from '../client-text.js';
import { type InboxWakeups, watchInbox } from '../run-cancel-inbox.js';
import type { SessionRecord, TranscriptEntryInput } from '../session-imports.js';
import { openThread, type ThreadContext } from '../thread-sessions.js';
import { TranscriptFeed } from '../transcript-feed.js';
import { endEntries } from './task-end-entries.js';
import {
  applyEntry,
  TASK_ENTRY,
  TASK_MESSAGE_ENTRY,
  TASK_PUSH_ENTRY,
  TASK_STATUS_ENTRY,
  type TaskRecord,
} from './task-entries.js';
import { type ApprovalReply, agentMessageJson, textPart } from './task-messages.js';
import { progressEvent } from './task-progress.js';
import { notSignedInText, SignInWatch, signInParts } from './task-sign-in.js';

/** A task (a turn) this process is carrying. */
export interface ActiveTask {
  taskId: string;
  contextId: string;
  agent: Agent;
  feed: TranscriptFeed;
  cancelled: boolean;
  /**
   * Whether the task's last event went out (the turn ended, or rests waiting for input): from then
   * until `done` the task is only being let go (its session saved, its lease released).
   */
  ended: boolean;
  /** Resolves once the turn rests and its session is let go. */
  done: Promise<void>;
  /** The task as this process wrote it (whole once `done`: no store read needed to answer a send). */
  record(): TaskRecord | undefined;
  /** Hears the task's events as they happen (kept ones once durable, text chunks at once); `final` on the last. */
  listen(listener: TaskListener): () => void;
  /** Resolves when the turn is done, or when the task rests `auth-required` here (its agent kept open). */
  untilRest(): Promise<void>;
  /** Cancels the task: its turn is interrupted (or its wait for sign-in ended), and it ends `canceled`. */
  cancel(): void;
  /**
   * While the task rests `auth-required` in this process (its agent open, holding the sign-in's
   * loopback listener): goes on with the next message on the task. Resolves once the task is
   * `working` again (or `failed`: a server still not signed in).
   */
  resume?: (message: Message, listener?: TaskListener) => Promise<void>;
  /** Ends a wait for sign-in (the server closes): the task fails saying so. */
  abandon(): void;
}

export type TaskListener = (event: StreamResponse, final: boolean) => void;

/** Tasks by context (session) id, in this process. */
export type ActiveTasks = Map<string, ActiveTask>;

/**
 * The task this process carries in a context, once any task there whose end already went out has
 * been let go: a client that acts on a task's last event at once (answers its approval, cancels it,
 * sends the next message) waits those few milliseconds instead of finding the context running.
 */
export async function carriedAtRest(active: ActiveTasks, contextId?: string) {
  if (!contextId) return undefined;
  let running = active.get(contextId);
  while (running?.ended) {
    await running.done;
    running = active.get(contextId);
  }
  return running;
}

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
  /**
   * `new`: a new task; `answers`: approval replies; `reply`: a reply to the question the task asked;
   * `signin`: the next message on a task resting `auth-required` that no process holds (`text` is
   * then the task's first message, which is sent once every MCP server is signed in).
   */
  kind: 'new' | 'answers' | 'reply' | 'signin';
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
  /** How long a task rests `auth-required` in this process before it fails (ms). */
  signInTimeoutMs: number;
  /** How long the next message waits for a sign-in whose browser just came back (ms). */
  signInGraceMs: number;
}

/** How a task resting `auth-required` goes on. */
type SignInOutcome = { kind: 'go' } | { kind: 'end'; state: string; text: string };

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
  /** Set while the task rests `auth-required` here: ends the wait. */
  let endWait: ((outcome: SignInOutcome) => void) | undefined;
  const rests = new Set<() => void>();
  const task: ActiveTask = {
    taskId,
    contextId,
    agent: undefined as unknown as Agent,
    feed,
    cancelled: false,
    ended: false,
    done: new Promise((resolve) => (release = resolve)),
    record: () => tasks.get(taskId),
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    untilRest() {
      if (task.resume) return Promise.resolve();
      return new Promise<void>((resolve) => {
        rests.add(resolve);
        void task.done.then(resolve);
      });
    },
    cancel() {
      task.cancelled = true;
      if (endWait) endWait({ kind: 'end', state: 'TASK_STATE_CANCELED', text: 'canceled by the client' });
      else task.agent.interrupt('canceled by the client');
    },
    abandon() {
      endWait?.({
        kind: 'end',
        state: 'TASK_STATE_FAILED',
        text: 'the server closed while the task waited for sign-in',
      });
    },
  };
  const emit = (event: StreamResponse, final: boolean) => {
    for (const listener of listeners) listener(event, final);
  };
  const signIns = new SignInWatch();
  active.set(contextId, task);
  let agent: Agent;
  try {
    agent = await openThread({ ...context, store: feed.store }, contextId, turn.record, {
      mcpAuth: (own) => signIns.hooks(own),
    });
  } catch (error) {
    active.delete(contextId);
    release();
    throw error;
  }
  task.agent = agent;
  // A cancel sent to another process sharing the store reaches this one through the session's inbox,
  // and so does a push config set there: this process writes it, the session's one writer.
  const inbox = turn.inbox
    ? watchInbox(context.store, contextId, {
        ...turn.inbox,
        write: (entries) => feed.append(entries),
        cancel: { runId: taskId, onCancel: () => task.cancel() },
      })
    : undefined;
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
        const final = entry.seq >= finalSeq;
        if (final) task.ended = true;
        emit(event, final);
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
  const messageEntry = (message: Message) => ({
    kind: 'event' as const,
    event: TASK_MESSAGE_ENTRY,
    data: { taskId, message: Message.toJSON(message) },
  });
  // A remote MCP server that waits for sign-in: a new turn rests `auth-required` (the message is sent
  // once the user has signed in and goes on); a task that went on in a process that does not hold
  // the sign-in fails naming the server (approval answers go on without its tools, as before).
  const pending = turn.kind === 'answers' ? [] : signIns.pending;
  const waitsSignIn = pending.length > 0 && turn.kind !== 'signin';
  const first =
    pending.length === 0
      ? status('TASK_STATE_WORKING')
      : waitsSignIn
        ? status('TASK_STATE_AUTH_REQUIRED', signInParts(pending))
        : status('TASK_STATE_FAILED', [textPart(notSignedInText(pending))]);
  const startEntries: TranscriptEntryInput[] = [
    turn.kind === 'new'
      ? {
          kind: 'event',
          event: TASK_ENTRY,
          data: { taskId, principal: context.principal, message: Message.toJSON(turn.message) },
        }
      : messageEntry(turn.message),
    ...(turn.push
      ? [{ kind: 'event' as const, event: TASK_PUSH_ENTRY, data: { taskId, ...turn.push } }]
      : []),
    first,
  ];
  // A caller that waits for the whole turn gets the task's start in the agent's first append (one
  // durable write fewer); a stream, a send that returns at once or a task waiting for sign-in gets it
  // on its own, durable first (its first events heard before the model's first streamed piece).
  if (turn.startWithTurn && pending.length === 0) void feed.hold(startEntries);
  else {
    await feed.store.appendTranscript(contextId, startEntries);
    await feed.settled();
  }
  if (pending.length > 0 && !waitsSignIn) finalSeq = feed.lastSeq;
  const signedIn = waitsSignIn ? waitForSignIn() : Promise.resolve<SignInOutcome>({ kind: 'go' });

  /** Rests the task `auth-required` until the next message on it, a cancel, the server's close or the time limit. */
  function waitForSignIn(): Promise<SignInOutcome> {
    return new Promise<SignInOutcome>((resolve) => {
      const timer = setTimeout(
        () =>
          finish({
            kind: 'end',
            state: 'TASK_STATE_FAILED',
            text: `${notSignedInText(signIns.pending)} (no message came on the task in ${Math.round(turn.signInTimeoutMs / 1000)} s)`,
          }),
        turn.signInTimeoutMs,
      );
      const finish = (outcome: SignInOutcome) => {
        clearTimeout(timer);
        endWait = undefined;
        task.resume = undefined;
        resolve(outcome);
      };
      endWait = finish;
      for (const rested of rests) rested();
      rests.clear();
      task.resume = async (message, listener) => {
        task.resume = undefined; // one message goes on; another meanwhile finds the context running
        if (listener) listeners.add(listener);
        await signIns.settled(turn.signInGraceMs);
        const still = signIns.pending;
        const entry = still.length === 0 ? status('TASK_STATE_WORKING') : undefined;
        if (entry) {
          await feed.store.appendTranscript(contextId, [messageEntry(message), entry]);
          await feed.settled();
          finish({ kind: 'go' });
        } else {
          await feed.store.appendTranscript(contextId, [messageEntry(message)]);
          await feed.settled();
          finish({ kind: 'end', state: 'TASK_STATE_FAILED', text: notSignedInText(still) });
        }
      };
    });
  }

  // The turn's end is held as it happens, to go out after the entries the agent writes at its rest
  // point, in the same durable write (or on its own after them: `writeHeld` below).
  let endTurn!: (end: TurnEnd) => void;
  const ended = new Promise<TurnEnd>((resolve) => {
    endTurn = (end) => {
      const last = endEntries(end, agent, task.cancelled, scrub, status, taskId);
      void feed.hold(last, { after: true, stamped: (seq) => (finalSeq = seq) });
      resolve(end);
    };
    const off = agent.on('*', (event: AgentEvent) => {
      if (event.type === 'content_chunk') {
        emit(chunkEvent(taskId, contextId, scrub(event.delta)), false);
      } else if (event.type === 'tool_progress') {
        // Live only, to the task's streaming callers (nothing is built when none listens).
        if (listeners.size > 0) emit(progressEvent(taskId, contextId, event, scrub), false);
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
      if (pending.length > 0 && !waitsSignIn) return; // failed above: nothing is sent
      await inbox?.ready; // interrupts left over from earlier turns are sorted out before this one starts
      const outcome = await signedIn;
      if (outcome.kind === 'end') {
        const last = [status(outcome.state, [textPart(outcome.text)])];
        finalSeq = feed.lastSeq + last.length;
        await feed.store.appendTranscript(contextId, last);
        await feed.settled();
        return;
      }
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
      await inbox?.stop();
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
