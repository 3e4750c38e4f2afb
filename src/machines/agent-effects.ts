import type { AnyActorRef, PromiseActorLogic, PromiseSnapshot } from 'xstate';
import { LazyAbort } from '../llm/call-abort.js';
import type { Message } from '../llm/message.js';
import type { ToolResult } from '../tools/tool-call.js';
import type { LlmCallInput, LlmCallOutput } from './actors/call-llm.js';
import type { CompactInput, CompactOutput } from './actors/compact-conversation.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentActorEvent } from './agent-events.js';
import type { EffectIO } from './effect-io.js';
import type { AgentEventType } from './emitted-events.js';

/** What the `initialize` effect returns: messages to add before the first turn (critical-action context). */
export interface InitializeOutput {
  messages?: Message[];
}

/**
 * One agent's side effects: what the machine's `initialize`, `callLlm` and `runTools` actors run.
 * `createAgent` builds them; embedders bind their own with {@link bindAgentEffects}.
 */
export interface AgentEffects {
  /** Runs once before the first turn (default: nothing to add). */
  initialize?(input: { sessionId: string }, io: EffectIO): Promise<InitializeOutput>;
  callLlm(input: LlmCallInput, io: EffectIO): Promise<LlmCallOutput>;
  runTools(input: RunToolsInput, io: EffectIO): Promise<ToolResult[]>;
  /** The summary call of a compaction (Compacting); without it the agent never compacts. */
  compact?(input: CompactInput, io: EffectIO): Promise<CompactOutput>;
  /**
   * Whether anything listens to emitted events of this type. Events nobody hears are not built
   * (default: every event is built).
   */
  hears?(type: AgentEventType): boolean;
}

const bound = new WeakMap<AnyActorRef, AgentEffects>();

/**
 * Binds an agent actor (made with `createActor(agentMachine, ...)`) to its effects. Call it before
 * `actor.start()`. This is the one way effects reach the machine: the machine definition is shared by
 * every agent (a machine provided per agent would build its state-node tree again for each one).
 */
export function bindAgentEffects(actor: AnyActorRef, effects: AgentEffects): void {
  bound.set(actor, effects);
}

/** The effects bound to an agent actor, if any. */
export function effectsOf(agent: AnyActorRef | undefined): AgentEffects | undefined {
  return agent ? bound.get(agent) : undefined;
}

/** What an effect is stopped with: the reason its signal aborts with. */
const STOPPED = new DOMException(
  'the agent stopped this step (interrupt, a new state, or agent.stop())',
  'AbortError',
);

/**
 * One run of an effect: the `EffectIO` it is given. One object per run, its signal and listeners made
 * only when asked for (`LazyAbort`: an effect actor starts twice per model call, closures per run add up).
 */
class EffectRun extends LazyAbort implements EffectIO {
  constructor(
    private readonly self: AnyActorRef,
    /** The agent actor the effect runs for (the effects are bound to it). */
    readonly parent: AnyActorRef | undefined,
  ) {
    super();
  }

  get active(): boolean {
    return this.self.getSnapshot().status === 'active';
  }

  send(event: AgentActorEvent): void {
    if (this.active) this.parent?.send(event);
  }

  hears(type: AgentEventType): boolean {
    return effectsOf(this.parent)?.hears?.(type) ?? true;
  }

  conversation(): readonly Message[] {
    const snapshot = this.parent?.getSnapshot() as { context?: { messages?: Message[] } } | undefined;
    return snapshot?.context?.messages ?? [];
  }

  /**
   * The actor was stopped (every stop of a started actor goes through its transition on
   * `xstate.stop`): `aborted` is set before the listeners run, since the actor's snapshot says
   * 'stopped' only after them; the signal (if made) aborts and the listeners hear it, once.
   */
  stop(): void {
    this.abort(STOPPED);
  }
}

const RESOLVE = 'agentloop.effect.done';
const REJECT = 'agentloop.effect.error';
const STOP = 'xstate.stop';

/**
 * Where an effect actor's snapshot keeps its run, made with the snapshot: a symbol key, so it is not
 * part of the snapshot's JSON, and `getPersistedSnapshot` leaves it out. Kept on the snapshot rather
 * than in a WeakMap by actor: a WeakMap entry a run (two a model call) cost more than the run's own
 * start (bench/README.md, xs36).
 */
const RUN = Symbol('agentloop.effectRun');

type EffectSnapshot<TOutput, TInput> = PromiseSnapshot<TOutput, TInput> & { [RUN]?: EffectRun };

/**
 * An actor logic that runs one of the bound effects, like XState's `fromPromise` (same snapshot, same
 * done and error events for `invoke`), except that the abort signal is made only when the effect
 * reads it. The effect is found through the actor's parent, the agent actor it was bound to.
 */
export function effectActor<TOutput, TInput>(
  name: string,
  run: (effects: AgentEffects, input: TInput, io: EffectIO) => Promise<TOutput>,
  unbound?: () => TOutput,
): PromiseActorLogic<TOutput, TInput> {
  type Snapshot = EffectSnapshot<TOutput, TInput>;
  /** The snapshot of a run starting with `input`, its `EffectRun` made for the actor `self`. */
  const active = (self: AnyActorRef, input: unknown): Snapshot => ({
    status: 'active',
    output: undefined,
    error: undefined,
    input: input as TInput,
    // Inside machines/ only: the effect actor's parent is the agent actor the effects are bound to
    // (XState sets it before it asks for the first snapshot).
    [RUN]: new EffectRun(self, (self as unknown as { _parent?: AnyActorRef })._parent),
  });
  const logic: PromiseActorLogic<TOutput, TInput> = {
    config: run as never,
    transition: (state: Snapshot, event) => {
      if (state.status !== 'active') return state;
      // Each way out leaves the run behind (`[RUN]: undefined`): a finished run keeps no actor alive.
      switch (event.type) {
        case RESOLVE:
          return {
            ...state,
            status: 'done',
            output: event.data as TOutput,
            input: undefined,
            [RUN]: undefined,
          };
        case REJECT:
          return { ...state, status: 'error', error: event.data, input: undefined, [RUN]: undefined };
        case STOP:
          state[RUN]?.stop();
          return { ...state, status: 'stopped', input: undefined, [RUN]: undefined };
        default:
          return state;
      }
    },
    start: (state: Snapshot, { self }) => {
      const io = state[RUN];
      if (state.status !== 'active' || !io) return;
      const effects = effectsOf(io.parent);
      let settled: Promise<TOutput>;
      try {
        if (!effects && unbound) settled = Promise.resolve(unbound());
        else if (!effects) {
          throw new Error(
            `agentMachine: no effects bound for "${name}"; use createAgent(), or bindAgentEffects(actor, effects) before actor.start()`,
          );
        } else settled = Promise.resolve(run(effects, state.input as TInput, io));
      } catch (error) {
        settled = Promise.reject(error);
      }
      settled.then(
        (data) => {
          if (io.active) self.send({ type: RESOLVE, data });
        },
        (data) => {
          if (io.active) self.send({ type: REJECT, data });
        },
      );
    },
    getInitialSnapshot: ({ self }, input) => active(self, input),
    getPersistedSnapshot: (snapshot: Snapshot) => {
      const { [RUN]: _run, ...saved } = snapshot;
      return saved as PromiseSnapshot<TOutput, TInput>;
    },
    // A run restored while active starts again (XState restarts it), with a run of its own.
    restoreSnapshot: (snapshot, { self }) => {
      const saved = snapshot as PromiseSnapshot<TOutput, TInput>;
      return saved.status === 'active' ? active(self, saved.input) : saved;
    },
  };
  return logic;
}
