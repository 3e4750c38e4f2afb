import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RunAgentInput } from '@ag-ui/core';
import type { Agent } from '../../agent/agent.js';
import { scrubForClient } from '../client-text.js';
import { HttpError } from '../http-error.js';
import { type InboxWakeups, type InboxWatch, watchInbox } from '../run-cancel-inbox.js';
import type { TranscriptEntry } from '../session-imports.js';
import { openThread, type ThreadContext, threadRecord } from '../thread-sessions.js';
import { TranscriptFeed } from '../transcript-feed.js';
import type { ActiveRun, ActiveRuns } from './active-runs.js';
import { ActivityGate } from './activity-gate.js';
import { HistoryConflict, type HistoryDelta, historyDelta } from './client-history.js';
import { EventStream } from './event-stream.js';
import { frontendTools } from './frontend-tools.js';
import { hasExpired, recordedExpiries, withExpiry } from './interrupt-expiry.js';
import { messagesSnapshot, wantsMessagesSnapshot } from './messages-snapshot.js';
import { answersFor } from './resume-answers.js';
import { RunEventMapper } from './run-event-mapper.js';
import { approvalInterruptId } from './run-events.js';
import { speaks10 } from './run-input.js';
import { takeOverRun } from './run-takeover.js';
import { forkParentRunId, latestRun, type RunStartData } from './thread-runs.js';
import { RUN_ENDED_ENTRY, RUN_STARTED_ENTRY, TranscriptMapping } from './transcript-events.js';

/** The key of a session's record `meta` naming the last run it ran (a replayed run id is refused). */
export const LAST_RUN_KEY = 'lastRunId';

export interface RunLimits {
  /** Bytes that may wait for a slow client before it is cut off (the run goes on). */
  maxBuffered: number;
  /** The client asked (`?cancelOnDisconnect=true`) that its going away cancel the run. */
  cancelOnDisconnect?: boolean;
  /** How cancels sent to other processes reach the run (the session's inbox), and how often to look. */
  inbox?: { pollMs: number; wakeups: InboxWakeups };
}

/**
 * One AG-UI run: the input checked against the thread's session, the new user message sent (or the
 * interrupts answered), and the turn's events streamed until it finishes, is interrupted for approval
 * or fails. Messages, tool calls and results come from the transcript as it is written (with their
 * seq as SSE id: a client may reconnect from there, docs/serve.md); streamed text, steps and state
 * from the bus. The run's start and end are transcript entries too. The turn does not depend on the
 * connection: a client that goes away stops only its stream.
 */
export async function handleRun(
  req: IncomingMessage,
  res: ServerResponse,
  input: RunAgentInput,
  context: ThreadContext,
  active: ActiveRuns,
  limits: RunLimits,
): Promise<void> {
  const { threadId, runId } = input;
  const running = active.get(threadId);
  if (running)
    throw new HttpError(409, 'thread_busy', `thread "${threadId}" is running run "${running.runId}"`);
  const record = await threadRecord(context.store, threadId, context.principal);
  if (limits.inbox) await refuseUnfinished(context, threadId, active, limits.inbox);
  if (active.has(threadId))
    throw new HttpError(409, 'thread_busy', `thread "${threadId}" is running another run`);
  let release!: () => void;
  const run: ActiveRun = {
    runId,
    agent: undefined as unknown as Agent,
    cancelled: false,
    done: new Promise((r) => (release = r)),
  };
  active.set(threadId, run);
  let agent: Agent | undefined;
  let stream: EventStream | undefined;
  /** The watch of the thread's inbox (cancels, entries other processes post). */
  let inbox: InboxWatch | undefined;
  try {
    if (record?.meta?.[LAST_RUN_KEY] === runId && (input.resume ?? []).length === 0) {
      throw new HttpError(
        409,
        'run_replayed',
        `run "${runId}" of thread "${threadId}" ran already; a new run needs a new runId`,
      );
    }
    const { entries } = await context.store.readTranscript(threadId);
    const feed = new TranscriptFeed(context.store, threadId, entries.at(-1)?.seq ?? 0);
    run.feed = feed;
    const results = new Map<string, string>();
    const clientTools = frontendTools(input.tools ?? [], results);
    const frontend = new Set(clientTools.map((tool) => tool.name));
    agent = await openThread({ ...context, store: feed.store }, threadId, record, {
      tools: clientTools,
      meta: { [LAST_RUN_KEY]: runId },
    });
    run.agent = agent;
    const approvals = agent.pendingApprovals.filter((call) => !frontend.has(call.name));
    const expiries = recordedExpiries(entries);
    const expired = (id: string) => hasExpired(expiries, id);
    const answers = answersFor(approvals, input.resume ?? [], expired);
    const parentRunId = input.parentRunId ?? forkParentRunId(entries);
    stream = new EventStream(req, res, limits.maxBuffered);
    const out = stream;
    const scrub = (text: string) => scrubForClient(text, agent!.redactor.redact);
    const mapping = new TranscriptMapping(threadId, scrub);
    mapping.learn(entries);
    const gate = new ActivityGate(
      (id) => mapping.knowsCall(id),
      (event) => out.send(event),
    );
    const mapper = new RunEventMapper(
      agent,
      {
        threadId,
        runId,
        protocol10: speaks10(input),
        cancelled: () => run.cancelled,
        scrub,
        frontend,
        open: mapping.open,
      },
      (event) => gate.send(event),
    );
    mapper.start({ timestamp: Date.now(), ...(parentRunId ? { parentRunId } : {}) });
    const answered = new Set(answers.map((a) => a.toolCallId));
    const delta = checkedHistory(agent, input, answered);
    const refusal =
      'code' in delta
        ? delta
        : nothingToRun(agent, answers.length + delta.toolResults.size, delta.user !== undefined, expired);
    if (refusal || 'code' in delta) {
      mapper.fail(refusal!.code, refusal!.message);
      out.send(mapper.final!);
      return;
    }
    if (wantsMessagesSnapshot(input)) out.send(messagesSnapshot(agent.messages, scrub, delta.user));
    // The transcript's entries from this run's start on are the run's durable events.
    let live = false;
    feed.listen((written) => {
      for (const entry of written) {
        const events = mapping.events(entry);
        if (!live) {
          live = isRunStart(entry, runId);
          continue; // the run's own RUN_STARTED went out already
        }
        if (events.length > 0) out.sendGroup(events, entry.seq);
      }
      gate.release();
    });
    await feed.store.appendTranscript(threadId, [
      {
        kind: 'event',
        event: RUN_STARTED_ENTRY,
        data: {
          runId,
          principal: context.principal,
          ...(parentRunId ? { parentRunId } : {}),
          ...(speaks10(input) ? { protocol10: true } : {}),
        } satisfies RunStartData,
      },
    ]);
    if (limits.inbox) {
      inbox = watchInbox(feed.store, threadId, {
        ...limits.inbox,
        write: (entries) => feed.append(entries),
        cancel: {
          runId,
          onCancel: (reason) => {
            if (mapper.ended || run.cancelled) return;
            run.cancelled = true;
            agent?.interrupt(reason);
          },
        },
      });
    }
    if (limits.cancelOnDisconnect) {
      res.on('close', () => {
        if (mapper.ended || run.cancelled) return;
        run.cancelled = true;
        agent?.interrupt('the client went away (cancelOnDisconnect)');
      });
    }
    // A new message while only expired interrupts wait: their calls are answered interrupted first.
    if (delta.user && agent.state === 'WaitingApproval') agent.interrupt('the approval expired');
    let endRun!: () => void;
    const ended = new Promise<void>((resolve) => {
      endRun = resolve;
    });
    const off = agent.on('*', (event) => {
      mapper.onEvent(event);
      if (mapper.ended) endRun();
    });
    await inbox?.ready; // interrupts left over from earlier runs are sorted out before this one starts
    if (answers.length > 0 || delta.toolResults.size > 0) {
      for (const answer of answers) {
        if (answer.approved) agent.approve(answer.toolCallId, { always: answer.always });
        else agent.reject(answer.toolCallId, answer.reason);
      }
      for (const [toolCallId, result] of delta.toolResults) {
        results.set(toolCallId, result);
        agent.approve(toolCallId);
      }
      // Calls still waiting (only some were answered): the run ends as it began, waiting for them. No
      // event may follow (a rejection is answered at once), so the end is taken here too.
      if (agent.state === 'WaitingApproval') mapper.waiting(Date.now());
      if (mapper.ended) endRun();
    } else {
      agent.send(delta.user!.text).catch((error: unknown) => mapper.fail('error', String(error)));
    }
    await ended;
    off();
    // Every write of the turn is durable (and streamed) before the run's end is written after them.
    await agent.flush();
    const final = withExpiry(mapper.final, expiries, context.approvalTimeoutMs);
    await feed.store.appendTranscript(threadId, [
      { kind: 'event', event: RUN_ENDED_ENTRY, data: { runId, event: final } },
    ]);
    await feed.settled();
  } finally {
    // The response ends once the session is saved and let go: the client's next run finds it at rest.
    await inbox?.stop();
    await settle(agent, active, threadId, release);
    stream?.end();
  }
}

/**
 * Refuses a run on a thread whose latest run has not ended (409): carried by another live process,
 * or carried by none (its process died), then taken over here first. A client reconnects to see it end.
 */
async function refuseUnfinished(
  context: ThreadContext,
  threadId: string,
  active: ActiveRuns,
  inbox: { pollMs: number; wakeups: InboxWakeups },
): Promise<void> {
  const last = latestRun((await context.store.readTranscript(threadId)).entries);
  if (!last || last.ended) return;
  const outcome = await takeOverRun(context, threadId, { active, ...inbox });
  if (outcome === 'none') return;
  throw new HttpError(
    409,
    'run_unfinished',
    `thread "${threadId}" has not finished run "${last.runId}"${outcome === 'here' ? ' (its process died; it is being finished here)' : ''}: reconnect to its events, or try again when it has ended`,
  );
}

function isRunStart(entry: TranscriptEntry, runId: string): boolean {
  return (
    entry.kind === 'event' &&
    entry.event === RUN_STARTED_ENTRY &&
    (entry.data as { runId?: unknown })?.runId === runId
  );
}

/** The run's new messages, or the conflict between the client's history and the thread's as a refusal. */
function checkedHistory(
  agent: Agent,
  input: RunAgentInput,
  answered: ReadonlySet<string>,
): HistoryDelta | { code: string; message: string } {
  try {
    return historyDelta(agent.messages, input.messages, answered);
  } catch (error) {
    if (error instanceof HistoryConflict) return { code: 'history_conflict', message: error.message };
    throw error;
  }
}

/** Closes the run's agent (its session saved, its lease released) and frees the thread. */
async function settle(
  agent: Agent | undefined,
  active: ActiveRuns,
  threadId: string,
  release: () => void,
): Promise<void> {
  try {
    await agent?.close();
  } catch {
    // the agent reported its own write failures on its bus; the session keeps its last rest point
  } finally {
    active.delete(threadId);
    release();
  }
}

/** Why a run cannot start, as a `RUN_ERROR`: nothing new to do, or a message while approvals wait. */
function nothingToRun(
  agent: Agent,
  answers: number,
  hasUser: boolean,
  expired: (interruptId: string) => boolean,
): { code: string; message: string } | undefined {
  const pending = agent.pendingApprovals.filter(
    (call) => !(hasUser && expired(approvalInterruptId(call.toolCallId))),
  );
  if (answers > 0) {
    return hasUser
      ? {
          code: 'bad_input',
          message: 'a run that answers interrupts cannot add a user message; send it in the next run',
        }
      : undefined;
  }
  if (pending.length > 0) {
    const ids = pending.map((call) => call.toolCallId).join(', ');
    return {
      code: 'interrupt_open',
      message: `the thread waits for answers to its interrupts (tool calls ${ids}): send them in resume[]`,
    };
  }
  if (!hasUser)
    return { code: 'bad_input', message: 'the run has no new user message and answers no interrupt' };
  return undefined;
}
