import type { ObjectContext, ObjectOptions, ObjectSharedContext } from '@restatedev/restate-sdk';
import * as restate from '@restatedev/restate-sdk';
import { type Agent, createAgent } from '../../agent/agent.js';
import type { AgentOptions, ExecutionResult } from '../../agent/agent-options.js';
import { isBusyState } from '../../machines/agent-states.js';
import type { ToolCallInfo } from '../../machines/emitted-events.js';
import type { SessionStore } from '../../session/session-store.js';
import { type MirrorStep, SessionMirror } from '../session-mirror.js';
import { quiesce, RestateStepDriver } from './restate-steps.js';

/** The agent options for a session (model, tools, instructions); the adapter sets the session and steps. */
export type AgentOptionsFactory = (sessionId: string) => AgentOptions | Promise<AgentOptions>;

/** Options of {@link restateAgent}. */
export interface RestateAgentOptions {
  /** Hears each agent the handler makes (one per turn and replay): listen to its events here. */
  onAgent?: (agent: Agent<unknown>, sessionId: string) => void;
  /**
   * A session store the sessions are kept in as well (a `PostgresSessionStore`, a `FileSessionStore`):
   * each turn's transcript and record are copied there at approval waits and at its end, so
   * `agentloop sessions`, replay and fork read them (docs/engines.md, "Sessions in a store").
   */
  store?: SessionStore;
  /**
   * The virtual object's options, as `restate.object({ options })` takes them: notably
   * `inactivityTimeout` and `abortTimeout` (Restate's defaults: 1 and 10 minutes), which bound how
   * long an attempt may run a step without progress before Restate aborts and retries it (a replay).
   * Keep them above your longest model call or tool (docs/engines.md, "Restate").
   */
  objectOptions?: ObjectOptions;
}

/** What the `state` handler answers: where the session stands (saved at each rest and approval wait). */
export interface RestateSessionView {
  sessionId: string;
  /** The agent's state: `AwaitingInput` before the first turn, `Thinking` while a turn runs. */
  state: string;
  /** Turns started in the session. */
  turn: number;
  /** Calls waiting for an answer (`approve` / `reject`). */
  pendingApprovals: ToolCallInfo[];
  /** The last turn's answer and why it ended, once one ended. */
  response?: string;
  terminateReason?: string;
  error?: string;
}

/** What `send` and `result` answer: the turn's outcome (its messages are in the session). */
export interface RestateTurnResult {
  success: boolean;
  response: string;
  terminateReason: string;
  iterations: number;
  state: string;
  error?: string;
}

/** An answer to an approval, as `approve` and `reject` take it. */
export interface ApprovalInput {
  toolCallId: string;
  always?: boolean;
  reason?: string;
}

const SNAPSHOT = 'snapshot';
const VIEW = 'view';
/** The last turn's outcome as sessions kept it before it moved into the view (read, never written). */
const RESULT = 'result';
const TURN = 'turn';

/**
 * The view as the object keeps it: which turn wrote it, and the last turn's outcome beside it (one
 * state entry, not two: docs/engines.md, "What a turn costs"). A running turn writes no view until it
 * waits for approval: while `turn` names another invocation than the view's, the session is `Thinking`.
 */
interface StoredView extends RestateSessionView {
  /** The turn that wrote it, and whether it wrote it at its end. */
  turnId?: string;
  ended?: boolean;
  result?: RestateTurnResult;
}
const approvalKey = (toolCallId: string) => `approval:${toolCallId}`;

/**
 * An agent as a Restate virtual object named `name`, keyed by session id (docs/engines.md). `send`
 * (exclusive) runs one turn: each model call, tool call and compaction is a `ctx.run` step of its
 * journal, each approval an awakeable that `approve` / `reject` (shared) resolve from any client at
 * any time while the invocation is suspended. `interrupt` (shared) cancels the running turn, which
 * ends Interrupted. `state` and `result` (shared) read where the session stands. The session's
 * snapshot is the object's state, written when a turn ends.
 */
export function restateAgent(
  name: string,
  agentOptions: AgentOptionsFactory,
  options: RestateAgentOptions = {},
) {
  return restate.object({
    name,
    ...(options.objectOptions ? { options: options.objectOptions } : {}),
    handlers: {
      send: async (ctx: ObjectContext, input: unknown): Promise<RestateTurnResult> => {
        const text = messageText(input, name, ctx.key);
        return runTurn(ctx, text, agentOptions, options);
      },
      approve: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext, input: unknown): Promise<boolean> =>
          answer(ctx, name, approvalInput(input, name, ctx.key, 'approve'), true),
      ),
      reject: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext, input: unknown): Promise<boolean> =>
          answer(ctx, name, approvalInput(input, name, ctx.key, 'reject'), false),
      ),
      interrupt: restate.handlers.object.shared(async (ctx: ObjectSharedContext): Promise<boolean> => {
        const turn = await runningTurn(ctx);
        if (!turn) return false;
        ctx.cancel(restate.InvocationIdParser.fromString(turn));
        return true;
      }),
      state: restate.handlers.object.shared(async (ctx: ObjectSharedContext): Promise<RestateSessionView> => {
        const stored = await ctx.get<StoredView>(VIEW);
        const turn = await ctx.get<string>(TURN);
        if (turn && stored?.turnId !== turn) {
          return { sessionId: ctx.key, state: 'Thinking', turn: 0, pendingApprovals: [] };
        }
        if (!stored) return { sessionId: ctx.key, state: 'AwaitingInput', turn: 0, pendingApprovals: [] };
        const { turnId: _turn, ended: _ended, result: _result, ...view } = stored;
        return view;
      }),
      result: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext): Promise<RestateTurnResult | null> =>
          (await ctx.get<StoredView>(VIEW))?.result ?? (await ctx.get<RestateTurnResult>(RESULT)) ?? null,
      ),
    },
  });
}

/** One turn, from the snapshot the last turn left to the next rest, through any approvals. */
async function runTurn(
  ctx: ObjectContext,
  text: string,
  agentOptions: AgentOptionsFactory,
  options: RestateAgentOptions,
): Promise<RestateTurnResult> {
  const sessionId = ctx.key;
  const snapshot = (await ctx.get<NonNullable<AgentOptions['snapshot']>>(SNAPSHOT)) ?? undefined;
  const base = await agentOptions(sessionId);
  const driver = new RestateStepDriver(ctx);
  const { store: _store, session: _session, ...rest } = base as AgentOptions & { session?: unknown };
  const direct: MirrorStep = (key, run) => ctx.run(key, run);
  const mirror = options.store
    ? await SessionMirror.open({
        store: options.store,
        sessionId,
        engine: 'restate',
        agentName: base.name,
        snapshot,
        step: direct,
      }).catch((error: unknown) => {
        throw new restate.TerminalError(error instanceof Error ? error.message : String(error));
      })
    : undefined;
  const agent = createAgent({
    ...rest,
    ...(mirror ? mirror.agentOptions() : { sessionId, ...(snapshot ? { snapshot } : {}) }),
    durableSteps: driver,
  }) as Agent<unknown>;
  options.onAgent?.(agent, sessionId);
  const turnId = ctx.request().id;
  /** The last turn's outcome, carried in the views this turn writes (read once, at an approval wait). */
  let previous: { result?: RestateTurnResult } | undefined;
  try {
    ctx.set(TURN, turnId);
    let ended: { result: ExecutionResult<unknown> } | { error: unknown } | undefined;
    agent.send(text).then(
      (result) => {
        ended = { result };
        driver.wake();
      },
      (error: unknown) => {
        ended = { error };
        driver.wake();
      },
    );
    const asked = new Set<string>();
    /** Whether the loop found nothing to wait for once already and let the machine settle since. */
    let looked = false;
    for (;;) {
      await driver.settled();
      // A copy to the store issued at an approval wait is waited for: the last copy starts where it ended.
      if (ended && !mirror?.copying) break;
      // Calls newly waiting for approval get an awakeable each; the state tells clients where they stand.
      const pending = !ended && agent.state === 'WaitingApproval' ? agent.pendingApprovals : [];
      const fresh = pending.filter((call) => !asked.has(call.toolCallId));
      for (const call of fresh) {
        asked.add(call.toolCallId);
        const awakeable = ctx.awakeable<ApprovalAnswerPayload>();
        ctx.set(approvalKey(call.toolCallId), awakeable.id);
        void driver.wait(awakeable.promise).then((given) => {
          ctx.clear(approvalKey(call.toolCallId));
          asked.delete(call.toolCallId);
          if (!agent.pendingApprovals.some((p) => p.toolCallId === call.toolCallId)) return;
          if (given?.approved) agent.approve(call.toolCallId, given.always ? { always: true } : {});
          else agent.reject(call.toolCallId, given?.reason);
        });
      }
      if (fresh.length > 0) {
        previous ??= { ...(await lastResult(ctx)) };
        ctx.set(VIEW, { ...view(agent, agent.state), turnId, ...previous } satisfies StoredView);
        if (mirror) void (await mirror.prepare(agent))((key, run) => driver.step(key, run));
      }
      if (driver.idle) {
        // A look that came at once (the turn's end, with a copy's bookkeeping still settling) gets the
        // two event-loop turns every look had before it is called stuck.
        if (!looked) {
          looked = true;
          await quiesce();
          continue;
        }
        throw new Error(`agentloop/restate: the turn of session "${sessionId}" waits for nothing`);
      }
      looked = false;
      if ((await driver.next()) === 'cancelled' && isBusyState(agent.state)) {
        agent.interrupt('interrupted through Restate');
      }
    }
    if (!ended) throw new Error('unreachable: the loop ends with the turn');
    if ('error' in ended) throw ended.error;
    const result = ended.result;
    if (mirror) await (await mirror.prepare(agent))(direct);
    for (const id of asked) ctx.clear(approvalKey(id));
    const turnResult: RestateTurnResult = {
      success: result.success,
      response: result.response,
      terminateReason: result.terminateReason,
      iterations: result.iterations,
      state: agent.state,
      ...(result.error !== undefined ? { error: result.error } : {}),
    };
    ctx.set(SNAPSHOT, agent.actor.getPersistedSnapshot());
    // The turn's end: `turn` stays, naming the turn this view says ended (nothing runs).
    const final: StoredView = {
      ...view(agent, agent.state, turnResult),
      turnId,
      ended: true,
      result: turnResult,
    };
    ctx.set(VIEW, final);
    return turnResult;
  } finally {
    agent.stop();
  }
}

/** The invocation id of the turn running now, or undefined when none runs. */
async function runningTurn(ctx: ObjectSharedContext): Promise<string | undefined> {
  const turn = await ctx.get<string>(TURN);
  if (!turn) return undefined;
  const stored = await ctx.get<StoredView>(VIEW);
  return stored?.turnId === turn && stored.ended ? undefined : turn;
}

/** The last turn's outcome as the object keeps it (in the view, or in its own entry before). */
async function lastResult(ctx: ObjectContext): Promise<{ result?: RestateTurnResult }> {
  const result = (await ctx.get<StoredView>(VIEW))?.result ?? (await ctx.get<RestateTurnResult>(RESULT));
  return result ? { result } : {};
}

/** What an awakeable of an approval is resolved with. */
interface ApprovalAnswerPayload {
  approved: boolean;
  always?: boolean;
  reason?: string;
}

/** Resolves the awakeable of a pending call; false when no call of that id waits in the session. */
async function answer(
  ctx: ObjectSharedContext,
  name: string,
  input: ApprovalInput,
  approved: boolean,
): Promise<boolean> {
  const id = await ctx.get<string>(approvalKey(input.toolCallId));
  if (!id) {
    throw new restate.TerminalError(
      `agentloop/restate: no call "${input.toolCallId}" waits for approval in session "${ctx.key}" of agent "${name}"`,
      { errorCode: 404 },
    );
  }
  const payload: ApprovalAnswerPayload = approved
    ? { approved, ...(input.always ? { always: true } : {}) }
    : { approved, ...(input.reason !== undefined ? { reason: input.reason } : {}) };
  ctx.resolveAwakeable(id, payload);
  return true;
}

function view(agent: Agent<unknown>, state: string, result?: RestateTurnResult): RestateSessionView {
  return {
    sessionId: agent.sessionId,
    state,
    turn: agent.context.turn,
    pendingApprovals: agent.pendingApprovals,
    ...(result
      ? {
          response: result.response,
          terminateReason: result.terminateReason,
          ...(result.error !== undefined ? { error: result.error } : {}),
        }
      : {}),
  };
}

/** The text of a `send`: `"text"` or `{ "text": "..." }`; anything else is refused naming the session. */
function messageText(input: unknown, name: string, key: string): string {
  const text = typeof input === 'string' ? input : (input as { text?: unknown } | null)?.text;
  if (typeof text === 'string' && text.trim() !== '') return text;
  throw new restate.TerminalError(
    `agentloop/restate: send to session "${key}" of agent "${name}" needs a message: "text" or { "text": "..." }, got ${describe(input)}`,
    { errorCode: 400 },
  );
}

function approvalInput(input: unknown, name: string, key: string, handler: string): ApprovalInput {
  const value = (typeof input === 'string' ? { toolCallId: input } : input) as Partial<ApprovalInput> | null;
  if (value && typeof value.toolCallId === 'string' && value.toolCallId !== '') {
    return {
      toolCallId: value.toolCallId,
      ...(value.always === true ? { always: true } : {}),
      ...(typeof value.reason === 'string' ? { reason: value.reason } : {}),
    };
  }
  throw new restate.TerminalError(
    `agentloop/restate: ${handler} on session "${key}" of agent "${name}" needs { "toolCallId": "..." }, got ${describe(input)}`,
    { errorCode: 400 },
  );
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}
