import type { Actor } from 'xstate';
import { DEFAULTS } from '../defaults.js';
import type { Redactor } from '../events/redact.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import { isBusyState } from '../machines/agent-states.js';
import { type PersistenceErrorHandler, SessionPersistence } from '../session/persistent-session.js';
import { executeToolCall, type StopNotice } from '../tools/execute-tool-call.js';
import { parseToolArgs } from '../tools/tool-call.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AgentOptions } from './agent-options.js';

/**
 * The session keeper for `store` / `session`, or undefined when the agent is not persisted. A tool
 * declared `idempotent` may run again after a crash; the transcript is written redacted.
 */
export function persistenceFor(
  options: AgentOptions<unknown>,
  registry: ToolRegistry,
  redactor: Redactor,
  onError: PersistenceErrorHandler,
): SessionPersistence | undefined {
  if (options.store === undefined && options.session === undefined) return undefined;
  if (
    options.session !== undefined &&
    options.sessionId !== undefined &&
    options.session !== options.sessionId
  ) {
    throw new Error(`createAgent: session "${options.session}" and sessionId "${options.sessionId}" differ`);
  }
  const sessionId = options.session ?? options.sessionId;
  const limits = options.limits ?? {};
  return new SessionPersistence(
    { ...options, session: sessionId, agentName: options.name },
    (name) => registry.get(name)?.idempotent === true,
    onError,
    (value) => redactor.redactValue(value),
    (call) =>
      executeToolCall(
        registry,
        {
          id: call.toolCallId,
          name: call.name,
          args: typeof call.args === 'string' ? parseToolArgs(call.args) : call.args,
          argsText: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}),
          needsApproval: false,
        },
        {
          stop: NEVER_STOPPED,
          timeoutMs: limits.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs,
          deadline: null,
          maxResultChars: limits.maxToolResultChars ?? DEFAULTS.maxToolResultChars,
          context: { sessionId: sessionId ?? '', turn: 0, iteration: 0 },
        },
      ),
  );
}

/** A re-run during a restore is not interrupted (the agent has not started yet; its tool timeout applies). */
const NEVER_STOPPED: StopNotice = { aborted: false, reason: undefined, onAbort: () => () => {} };

/** Resolves a turn's `send()` / `resume()` callers with its result. */
type TurnWaiter<R> = (result: R) => void;

/**
 * When a turn counts as done. Without persistence, at once (as the machine rests). With it, once the
 * turn's writes (its last messages, the save at its rest point) are durable: a write that fails
 * meanwhile ends the turn in Error (`WRITE_FAILED`), so a turn is never reported done with its record
 * lost (see {@link TurnSettler.endTurn}).
 */
export class TurnSettler<R> {
  readonly #persistence: SessionPersistence | undefined;
  readonly #read: () => R;
  /** Turns that came to rest and wait for their writes. */
  #settling = 0;
  /** Write failures that ended a turn; a settling turn reads its result again when this moved. */
  #failures = 0;
  /** Callers waiting for their turn's writes (made with the first saved turn: an agent without a store has none). */
  #held: Set<TurnWaiter<R>> | undefined;

  constructor(persistence: SessionPersistence | undefined, read: () => R) {
    this.#persistence = persistence;
    this.#read = read;
  }

  /**
   * Settles the callers of a turn that just came to rest (call it from `turn_end`, emitted while the
   * transition is applied: its snapshot and the writes it starts come right after).
   */
  settle(waiters: TurnWaiter<R>[]): void {
    const persistence = this.#persistence;
    if (!persistence) {
      if (waiters.length > 0) queueMicrotask(() => resolveAll(waiters, this.#read()));
      return;
    }
    this.#held ??= new Set();
    const held = this.#held;
    for (const w of waiters) held.add(w);
    this.#settling++;
    const failures = this.#failures;
    let result: R | undefined;
    queueMicrotask(() => {
      result = this.#read();
      void persistence.flush().then(() => {
        this.#settling--;
        const released = waiters.filter((w) => held.delete(w));
        if (released.length === 0) return;
        resolveAll(released, this.#failures === failures ? result! : this.#read());
      });
    });
  }

  /**
   * Ends the turn a failed write belongs to: sends `WRITE_FAILED` (naming the write in `message`)
   * while a turn runs or waits for its writes and the machine takes it there. False when there is no
   * such turn: the caller reports the failure (an `error` event; the next write writes the entries first).
   */
  endTurn(actor: Actor<AgentMachine> | undefined, message: string): boolean {
    if (!actor) return false;
    const event = { type: 'WRITE_FAILED' as const, message };
    const snapshot = actor.getSnapshot();
    if (snapshot.status !== 'active') return false; // the agent was stopped
    if (!(isBusyState(snapshot.value) || this.#settling > 0) || !snapshot.can(event)) return false;
    this.#failures++;
    actor.send(event);
    return true;
  }

  /** Resolves every caller still waiting for its turn's writes (the agent was stopped). */
  releaseAll(result: R): void {
    if (!this.#held) return;
    const held = [...this.#held];
    this.#held.clear();
    resolveAll(held, result);
  }
}

function resolveAll<R>(waiters: readonly TurnWaiter<R>[], result: R): void {
  for (const resolve of waiters) resolve(result);
}
