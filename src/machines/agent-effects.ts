import type { AnyActorRef, PromiseActorLogic, PromiseSnapshot } from 'xstate';
import type { Message } from '../llm/message.js';
import type { ToolResult } from '../tools/tool-call.js';
import type { LlmCallInput, LlmCallOutput } from './actors/call-llm.js';
import type { RunToolsInput } from './actors/run-tools.js';
import type { AgentActorEvent } from './agent-events.js';
import type { AgentEventType } from './emitted-events.js';

/** What the `initialize` effect returns: messages to add before the first turn (critical-action context). */
export interface InitializeOutput {
  messages?: Message[];
}

/** What an effect gets besides its input: its abort signal and a way to tell the machine. */
export interface EffectIO {
  /**
   * Aborted when the machine stops the actor (it left the state, an interrupt, the agent stopped).
   * Made on first read: an effect that never looks costs no AbortController.
   */
  readonly signal: AbortSignal;
  /** Whether the actor was stopped, without making a signal. */
  readonly aborted: boolean;
  /** Why it was stopped, once `aborted`. */
  readonly reason: unknown;
  /** Calls `listener` once when the actor is stopped, without making a signal; returns how to stop listening. */
  onAbort(listener: () => void): () => void;
  /** Sends an event to the agent machine; dropped once the actor is stopped or done. */
  send(event: AgentActorEvent): void;
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

/** How one effect actor is stopped: its signal's controller and `onAbort` listeners, made when asked for. */
interface StopState {
  controller?: AbortController;
  listeners?: Set<() => void>;
}

function stopEffect(stop: StopState | undefined): void {
  if (!stop) return;
  stop.controller?.abort(STOPPED);
  const listeners = stop.listeners;
  stop.listeners = undefined;
  for (const listener of listeners ?? []) listener();
}

const RESOLVE = 'agentloop.effect.done';
const REJECT = 'agentloop.effect.error';
const STOP = 'xstate.stop';

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
  const stops = new WeakMap<AnyActorRef, StopState>();
  const logic: PromiseActorLogic<TOutput, TInput> = {
    config: run as never,
    transition: (state, event, scope) => {
      if (state.status !== 'active') return state;
      switch (event.type) {
        case RESOLVE:
          return { ...state, status: 'done', output: event.data as TOutput, input: undefined };
        case REJECT:
          return { ...state, status: 'error', error: event.data, input: undefined };
        case STOP:
          stopEffect(stops.get(scope.self));
          return { ...state, status: 'stopped', input: undefined };
        default:
          return state;
      }
    },
    start: (state, { self }) => {
      if (state.status !== 'active') return;
      // Inside machines/ only: the effect actor's parent is the agent actor the effects are bound to.
      const parent = (self as unknown as { _parent?: AnyActorRef })._parent;
      const active = () => self.getSnapshot().status === 'active';
      const stopState = (): StopState => {
        let stop = stops.get(self);
        if (!stop) {
          stop = {};
          stops.set(self, stop);
        }
        return stop;
      };
      const io: EffectIO = {
        get signal() {
          const stop = stopState();
          if (!stop.controller) {
            stop.controller = new AbortController();
            if (self.getSnapshot().status === 'stopped') stop.controller.abort(STOPPED);
          }
          return stop.controller.signal;
        },
        get aborted() {
          return self.getSnapshot().status === 'stopped';
        },
        get reason() {
          return self.getSnapshot().status === 'stopped' ? STOPPED : undefined;
        },
        onAbort: (listener) => {
          const stop = stopState();
          stop.listeners ??= new Set();
          stop.listeners.add(listener);
          return () => stop.listeners?.delete(listener);
        },
        send: (event) => {
          if (active()) parent?.send(event);
        },
      };
      const effects = effectsOf(parent);
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
          if (active()) self.send({ type: RESOLVE, data });
        },
        (data) => {
          if (active()) self.send({ type: REJECT, data });
        },
      );
    },
    getInitialSnapshot: (_, input) =>
      ({ status: 'active', output: undefined, error: undefined, input }) as PromiseSnapshot<TOutput, TInput>,
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as PromiseSnapshot<TOutput, TInput>,
  };
  return logic;
}
