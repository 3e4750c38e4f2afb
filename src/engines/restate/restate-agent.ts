import type { ObjectContext, ObjectSharedContext, RestatePromise } from '@restatedev/restate-sdk';
import * as restate from '@restatedev/restate-sdk';
import { type Agent, createAgent } from '../../agent/agent.js';
import type { AgentOptions, ExecutionResult } from '../../agent/agent-options.js';
import { isBusyState } from '../../machines/agent-states.js';
import type { ToolCallInfo } from '../../machines/emitted-events.js';
import { restateSteps } from './restate-steps.js';

/** The agent options for a session (model, tools, instructions); the adapter sets the session and steps. */
export type AgentOptionsFactory = (sessionId: string) => AgentOptions | Promise<AgentOptions>;

/** Options of {@link restateAgent}. */
export interface RestateAgentOptions {
  /** Hears each agent the handler makes (one per turn and replay): listen to its events here. */
  onAgent?: (agent: Agent<unknown>, sessionId: string) => void;
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
const RESULT = 'result';
const TURN = 'turn';
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
        const turn = await ctx.get<string>(TURN);
        if (!turn) return false;
        ctx.cancel(restate.InvocationIdParser.fromString(turn));
        return true;
      }),
      state: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext): Promise<RestateSessionView> =>
          (await ctx.get<RestateSessionView>(VIEW)) ?? {
            sessionId: ctx.key,
            state: 'AwaitingInput',
            turn: 0,
            pendingApprovals: [],
          },
      ),
      result: restate.handlers.object.shared(
        async (ctx: ObjectSharedContext): Promise<RestateTurnResult | null> =>
          (await ctx.get<RestateTurnResult>(RESULT)) ?? null,
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
  const snapshot = await ctx.get<NonNullable<AgentOptions['snapshot']>>(SNAPSHOT);
  const base = await agentOptions(sessionId);
  let failure: { error: unknown } | undefined;
  let failed!: (error: unknown) => void;
  const engineFailed = new Promise<never>((_, reject) => {
    failed = (error) => {
      failure ??= { error };
      reject(error);
    };
  });
  engineFailed.catch(() => {});
  const interrupt = () => {
    if (isBusyState(agent.state)) agent.interrupt('interrupted through Restate');
  };
  const { store: _store, session: _session, ...rest } = base as AgentOptions & { session?: unknown };
  const agent = createAgent({
    ...rest,
    sessionId,
    ...(snapshot ? { snapshot } : {}),
    durableSteps: restateSteps(ctx, { cancelled: interrupt, failed }),
  }) as Agent<unknown>;
  options.onAgent?.(agent, sessionId);
  try {
    await agent.ready();
    ctx.set(TURN, ctx.request().id);
    ctx.set(VIEW, view(agent, 'Thinking'));
    const done = agent.send(text);
    done.catch(() => {});
    const waits = new Map<string, RestatePromise<{ toolCallId: string; answer: ApprovalAnswerPayload }>>();
    let result: ExecutionResult<unknown> | undefined;
    while (!result) {
      const next = await Promise.race([
        done.then((r) => ({ result: r })),
        approvalAsked(agent, waits),
        engineFailed,
      ]);
      if ('result' in next) {
        result = next.result;
        break;
      }
      // Calls newly waiting get an awakeable each; the state tells clients where they stand.
      for (const call of agent.pendingApprovals) {
        if (waits.has(call.toolCallId)) continue;
        const awakeable = ctx.awakeable<ApprovalAnswerPayload>();
        ctx.set(approvalKey(call.toolCallId), awakeable.id);
        waits.set(
          call.toolCallId,
          awakeable.promise.map((value) => ({
            toolCallId: call.toolCallId,
            answer: value ?? { approved: false },
          })),
        );
      }
      ctx.set(VIEW, view(agent, agent.state));
      const open = agent.pendingApprovals.flatMap((c) => {
        const wait = waits.get(c.toolCallId);
        return wait ? [wait] : [];
      });
      if (open.length === 0) continue;
      try {
        const { toolCallId, answer: given } = await Promise.race([
          restate.RestatePromise.race(open),
          engineFailed,
        ]);
        waits.delete(toolCallId);
        ctx.clear(approvalKey(toolCallId));
        if (!agent.pendingApprovals.some((p) => p.toolCallId === toolCallId)) continue;
        if (given.approved) agent.approve(toolCallId, given.always ? { always: true } : {});
        else agent.reject(toolCallId, given.reason);
      } catch (error) {
        if (!(error instanceof restate.CancelledError)) throw error;
        interrupt();
      }
    }
    if (failure) throw failure.error;
    for (const id of waits.keys()) ctx.clear(approvalKey(id));
    const turnResult: RestateTurnResult = {
      success: result.success,
      response: result.response,
      terminateReason: result.terminateReason,
      iterations: result.iterations,
      state: agent.state,
      ...(result.error !== undefined ? { error: result.error } : {}),
    };
    ctx.set(SNAPSHOT, agent.actor.getPersistedSnapshot());
    ctx.set(RESULT, turnResult);
    ctx.set(VIEW, view(agent, agent.state, turnResult));
    ctx.clear(TURN);
    return turnResult;
  } finally {
    agent.stop();
  }
}

/** What an awakeable of an approval is resolved with. */
interface ApprovalAnswerPayload {
  approved: boolean;
  always?: boolean;
  reason?: string;
}

/** Resolves when a call waits for approval that has no awakeable yet (the machine asked for an answer). */
function approvalAsked(agent: Agent<unknown>, waits: ReadonlyMap<string, unknown>): Promise<{ asked: true }> {
  const unasked = () => agent.pendingApprovals.some((p) => !waits.has(p.toolCallId));
  return new Promise((resolve) => {
    if (unasked()) return resolve({ asked: true });
    const sub = agent.actor.subscribe(() => {
      if (!unasked()) return;
      sub.unsubscribe();
      resolve({ asked: true });
    });
  });
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
