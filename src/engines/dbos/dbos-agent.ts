import { DBOS } from '@dbos-inc/dbos-sdk';
import type pg from 'pg';
import { type Agent, createAgent } from '../../agent/agent.js';
import type { AgentOptions, ExecutionResult } from '../../agent/agent-options.js';
import type { SessionStore } from '../../session/session-store.js';
import { type MirrorStep, SessionMirror } from '../session-mirror.js';
import { DbosInterrupts, InterruptWatch } from './dbos-interrupts.js';
import { INPUT_TOPIC, type TurnInput, turnQueueName, turnWorkflowName } from './dbos-names.js';
import { DbosSessions, type DbosSessionView } from './dbos-sessions.js';
import { DbosTurnSteps, quiesce } from './dbos-turn-steps.js';

/** The agent options for a session (model, tools, instructions); the adapter sets the session and steps. */
export type AgentOptionsFactory = (sessionId: string) => AgentOptions | Promise<AgentOptions>;

/** Options of {@link dbosAgent}. */
export interface DbosAgentOptions {
  /** The application's PostgreSQL (the sessions table goes there; DBOS's own tables are its config's). */
  pool: pg.Pool;
  /** Schema of the sessions table (default `agentloop_dbos`). */
  schema?: string;
  /** The DBOS queue turns are enqueued on (default `agentloop_<name>`), one turn of a session at a time. */
  queue?: string;
  /**
   * How often, at least, a worker looks for queued turns (DBOS's `minPollingIntervalMs`), and `send`
   * for the turn's result; default DBOS's own (1 s): a message waits up to this long before its turn
   * starts, and `send` as long after it ended.
   */
  queuePollMs?: number;
  /** How long a turn waits for an answer to an approval before it looks again (default a day). */
  approvalWaitSeconds?: number;
  /**
   * How often a worker running turns looks for interrupts asked of them (default 250 ms): an
   * interrupt stops a running model call or tool this long after it was asked, at most.
   */
  interruptPollMs?: number;
  /** Hears each agent a turn workflow makes (one per turn and replay): listen to its events here. */
  onAgent?: (agent: Agent<unknown>, sessionId: string) => void;
  /**
   * A session store the sessions are kept in as well (a `PostgresSessionStore` on the same database is
   * natural): each turn's transcript and record are copied there at approval waits and at its end, so
   * `agentloop sessions`, replay and fork read them (docs/engines.md, "Sessions in a store").
   */
  store?: SessionStore;
}

/** What a turn workflow resolves with: the turn's outcome (its messages are in the session). */
export interface DbosTurnResult {
  success: boolean;
  response: string;
  terminateReason: string;
  iterations: number;
  state: string;
  error?: string;
}

/**
 * An agent whose turns are DBOS workflows (docs/engines.md): each turn a workflow on a queue
 * partitioned by session id (one turn of a session runs at a time), each model call and tool call a
 * step, each answer to an approval a message (`DBOS.send` / `DBOS.recv`). The session's snapshot is
 * kept in a table beside DBOS's (`DbosSessions`). Call before `DBOS.launch()` (it registers the
 * workflow), then `start()` after it.
 */
export function dbosAgent(name: string, agentOptions: AgentOptionsFactory, options: DbosAgentOptions) {
  const sessions = new DbosSessions(options.pool, options.schema);
  const interrupts = new DbosInterrupts(options.pool, options.schema);
  const watch = new InterruptWatch(interrupts, options.interruptPollMs ?? 250);
  const queue = options.queue ?? turnQueueName(name);
  const waitSeconds = options.approvalWaitSeconds ?? 86_400;
  const turn = DBOS.registerWorkflow(
    async (sessionId: string, text: string): Promise<DbosTurnResult> =>
      runTurn({
        name,
        sessionId,
        text,
        sessions,
        watch,
        agentOptions,
        waitSeconds,
        onAgent: options.onAgent,
        store: options.store,
      }),
    { name: turnWorkflowName(name) },
  );
  const pendingView = async (sessionId: string, toolCallId: string, handler: string) => {
    const view = (await sessions.load(name, sessionId))?.view;
    if (!view?.workflowId || !view.pendingApprovals.some((p) => p.toolCallId === toolCallId)) {
      throw new Error(
        `agentloop/dbos: ${handler}: no call "${toolCallId}" waits for approval in session "${sessionId}" of agent "${name}"`,
      );
    }
    return view.workflowId;
  };
  const post = async (sessionId: string, text: string): Promise<string> => {
    if (typeof text !== 'string' || text.trim() === '') {
      throw new Error(`agentloop/dbos: send to session "${sessionId}" of agent "${name}" needs a message`);
    }
    const handle = await DBOS.startWorkflow(turn, {
      queueName: queue,
      enqueueOptions: { queuePartitionKey: sessionId },
    })(sessionId, text);
    return handle.workflowID;
  };
  return {
    /** The DBOS queue the turns go on. */
    queue,
    /** Creates the sessions table and registers the queue; call after `DBOS.launch()`, in every process. */
    async start(): Promise<void> {
      await sessions.migrate();
      await interrupts.migrate();
      // DBOS's tables beside the sessions table: a turn's end need not wait for its own flush.
      await sessions.findDbosTables();
      await DBOS.registerQueue(queue, {
        partitionConcurrency: 1,
        onConflict: 'always_update',
        ...(options.queuePollMs !== undefined ? { minPollingIntervalMs: options.queuePollMs } : {}),
      });
    },
    /** Enqueues a message; resolves with the turn's workflow id once DBOS holds it. */
    post,
    /** Enqueues a message and waits for the turn to end (approvals answered meanwhile by others). */
    async send(sessionId: string, text: string): Promise<DbosTurnResult> {
      const id = await post(sessionId, text);
      const polls = options.queuePollMs !== undefined ? { pollingIntervalMs: options.queuePollMs } : {};
      return DBOS.retrieveWorkflow<DbosTurnResult>(id).getResult(polls);
    },
    async approve(sessionId: string, toolCallId: string, approve: { always?: boolean } = {}): Promise<true> {
      const workflowId = await pendingView(sessionId, toolCallId, 'approve');
      const input: TurnInput = { kind: 'approval', toolCallId, approved: true, ...approve };
      await DBOS.send(workflowId, input, INPUT_TOPIC);
      return true;
    },
    async reject(sessionId: string, toolCallId: string, reason?: string): Promise<true> {
      const workflowId = await pendingView(sessionId, toolCallId, 'reject');
      const input: TurnInput = {
        kind: 'approval',
        toolCallId,
        approved: false,
        ...(reason !== undefined ? { reason } : {}),
      };
      await DBOS.send(workflowId, input, INPUT_TOPIC);
      return true;
    },
    /**
     * Interrupts the session's running turn, wherever it stands (a model call, tools, an approval
     * wait): it ends Interrupted. False when no turn runs.
     */
    async interrupt(sessionId: string, reason?: string): Promise<boolean> {
      const view = (await sessions.load(name, sessionId))?.view;
      if (!view?.workflowId) return false;
      await interrupts.ask(view.workflowId, reason, `interrupt on session "${sessionId}"`);
      // A turn waiting for approval is in `DBOS.recv`: the message wakes it there.
      const input: TurnInput = { kind: 'interrupt', ...(reason !== undefined ? { reason } : {}) };
      await DBOS.send(view.workflowId, input, INPUT_TOPIC);
      return true;
    },
    /** Where the session stands. */
    async state(sessionId: string): Promise<DbosSessionView> {
      return (
        (await sessions.load(name, sessionId))?.view ?? {
          sessionId,
          state: 'AwaitingInput',
          turn: 0,
          pendingApprovals: [],
        }
      );
    },
    /** The last turn's outcome, or null before one ended. */
    async result(sessionId: string): Promise<DbosTurnResult | null> {
      return ((await sessions.load(name, sessionId))?.result as DbosTurnResult | undefined) ?? null;
    },
  };
}

/** What one turn workflow needs. */
interface TurnRun {
  name: string;
  sessionId: string;
  text: string;
  sessions: DbosSessions;
  watch: InterruptWatch;
  agentOptions: AgentOptionsFactory;
  waitSeconds: number;
  onAgent: DbosAgentOptions['onAgent'];
  store: SessionStore | undefined;
}

const dbosStep: MirrorStep = (key, run) => DBOS.runStep(run, { name: key });

/** The reason of an interrupt asked without one. */
const INTERRUPTED = 'interrupted through DBOS';

/** One turn: from the snapshot the last turn left to the next rest, through any approvals. */
async function runTurn(run: TurnRun): Promise<DbosTurnResult> {
  const { name, sessionId, sessions } = run;
  const workflowId = DBOS.workflowID ?? '';
  const base = await run.agentOptions(sessionId);
  const { store: _store, session: _session, ...rest } = base as AgentOptions & { session?: unknown };
  // Not a step (it would add a committed record): one statement that reads the same snapshot in
  // every attempt, sets the view in the first only, and reads an interrupt asked already
  // (docs/engines.md, "What a turn costs").
  const started: DbosSessionView = {
    sessionId,
    state: 'Thinking',
    turn: 0,
    pendingApprovals: [],
    workflowId,
  };
  const start = await sessions.start(name, sessionId, workflowId, started);
  const snapshot = start.snapshot as NonNullable<AgentOptions['snapshot']> | undefined;
  const mirror = run.store
    ? await SessionMirror.open({
        store: run.store,
        sessionId,
        engine: 'dbos',
        agentName: base.name,
        snapshot,
        step: dbosStep,
      })
    : undefined;
  const steps = new DbosTurnSteps();
  const unwatch = run.watch.watch(workflowId, (reason) => steps.hear(reason ?? INTERRUPTED), start.interrupt);
  const agent = createAgent({
    ...rest,
    ...(mirror ? mirror.agentOptions() : { sessionId, ...(snapshot ? { snapshot } : {}) }),
    durableSteps: steps,
  }) as Agent<unknown>;
  steps.attach((reason) => agent.interrupt(reason));
  run.onAgent?.(agent, sessionId);
  try {
    let ended: { result: ExecutionResult<unknown> } | { error: unknown } | undefined;
    const settled = agent.send(run.text).then(
      (result) => {
        ended = { result };
      },
      (error: unknown) => {
        ended = { error };
      },
    );
    let told = '';
    for (;;) {
      // The agent rests: nothing of its machine is left to settle (its steps are waited for below).
      if (ended) break;
      await quiesce();
      if (ended) break;
      const pending = agent.state === 'WaitingApproval' ? agent.pendingApprovals : [];
      if (pending.length === 0) {
        await nextApprovalWait(agent, settled);
        continue;
      }
      const ids = pending.map((p) => p.toolCallId).join();
      if (ids !== told) {
        told = ids;
        // Calls of the batch that need no approval run meanwhile: their steps go first.
        await steps.settled();
        // An interrupt may have reached one of them.
        await quiesce();
        if (ended || agent.state !== 'WaitingApproval') continue;
        // The store first: a client that sees the wait in the view finds it there too.
        await mirror?.sync(agent, dbosStep);
        const waiting = view(agent, workflowId);
        await DBOS.runStep(() => sessions.write(name, sessionId, { view: waiting }), {
          name: 'agentloop.view',
        });
      }
      const input = await DBOS.recv<TurnInput>(INPUT_TOPIC, { timeoutSeconds: run.waitSeconds });
      if (!input) continue;
      if (input.kind === 'interrupt') {
        agent.interrupt(input.reason ?? INTERRUPTED);
        continue;
      }
      if (!agent.pendingApprovals.some((p) => p.toolCallId === input.toolCallId)) continue;
      if (input.approved) agent.approve(input.toolCallId, input.always ? { always: true } : {});
      else agent.reject(input.toolCallId, input.reason);
    }
    if ('error' in ended) throw ended.error;
    const result = ended.result;
    // Steps an interrupt cut end (are recorded) before the turn's last steps are called; the agent
    // rests, so no effect step follows them (no event-loop turns are waited for: the turn's end is
    // on the session's path).
    await steps.drained();
    const outcome: DbosTurnResult = {
      success: result.success,
      response: result.response,
      terminateReason: result.terminateReason,
      iterations: result.iterations,
      state: agent.state,
      ...(result.error !== undefined ? { error: result.error } : {}),
    };
    await mirror?.sync(agent, dbosStep);
    const final = {
      ...view(agent, undefined),
      response: outcome.response,
      terminateReason: outcome.terminateReason,
    };
    // Not a step: run again by a replay it writes what the first execution wrote (docs/engines.md),
    // and clears the turn's interrupt (again a no-op).
    await sessions.end(name, sessionId, workflowId, {
      view: final,
      snapshot: agent.actor.getPersistedSnapshot(),
      result: outcome,
    });
    return outcome;
  } finally {
    unwatch();
    agent.stop();
  }
}

function view(agent: Agent<unknown>, workflowId: string | undefined): DbosSessionView {
  return {
    sessionId: agent.sessionId,
    state: agent.state,
    turn: agent.context.turn,
    pendingApprovals: agent.pendingApprovals.map((p) => ({
      toolCallId: p.toolCallId,
      name: p.name,
      args: p.args,
    })),
    ...(workflowId ? { workflowId } : {}),
  };
}

/**
 * Resolves when calls wait for approval (the machine emits `approval_requested` on every entry to
 * WaitingApproval), or `ended` settles. Only these two: a listener of `state_change` would make the
 * machine build that event at every transition of every turn, and wake the loop for nothing.
 */
function nextApprovalWait(agent: Agent<unknown>, ended: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const off = agent.on('approval_requested', done);
    void ended.then(done, done);
    function done() {
      off();
      resolve();
    }
  });
}
