import { type Actor, createActor } from 'xstate';
import type { ZodType } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { createAuditLog } from '../events/audit-log.js';
import { attachDebugLog, debugFromEnv } from '../events/debug-log.js';
import { AgentEventBus } from '../events/event-bus.js';
import { createEventRedaction } from '../events/event-redaction.js';
import { createRedactor, type Redactor } from '../events/redact.js';
import type { Message } from '../llm/message.js';
import { createOpenAIClient } from '../llm/openai-client.js';
import { callLlmCreator } from '../machines/actors/call-llm.js';
import { composeToolHooks } from '../machines/actors/compose-tool-hooks.js';
import { toolRunnerCreator } from '../machines/actors/run-tools.js';
import { type AgentActors, bindAgentActors, sharedAgentMachine } from '../machines/agent-binding.js';
import type { AgentContext } from '../machines/agent-context.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { AgentEvent, AgentEventType, ToolCallInfo } from '../machines/emitted-events.js';
import { createContextGuard } from '../prompt/context-guard.js';
import { type PersistenceErrorHandler, SessionPersistence } from '../session/persistent-session.js';
import type { SessionRecord, SessionStore } from '../session/session-store.js';
import type { RestoreReport } from '../session/transcript-replay.js';
import { loopControlTools } from '../tools/loop-control-tools.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { attachInspection, type InspectionAttachment } from './agent-inspection.js';
import type { AgentOptions, AgentStateName, ExecutionResult } from './agent-options.js';

export type { AgentOptions, AgentStateName, ExecutionResult } from './agent-options.js';

const BUSY: ReadonlySet<string> = new Set(['Thinking', 'ExecutingTool', 'WaitingApproval']);

/**
 * A running agent: the statechart bound to an OpenAI client and tools, with a typed event bus.
 * Create it with `createAgent`.
 */
export class Agent<TOutput = unknown> {
  readonly bus = new AgentEventBus();
  readonly registry: ToolRegistry;
  /** Tool names the user approved for the whole session. */
  readonly alwaysAllowed = new Set<string>();
  /** Replaces the API key, `OPENAI_API_KEY` and the `secrets` option in text and values (transcript writers use it). */
  readonly redactor: Redactor;
  readonly #outputSchema: ZodType<TOutput> | undefined;
  #turnWaiters: ((result: ExecutionResult<TOutput>) => void)[] = [];
  #ready: Promise<void>;
  #actor: Actor<AgentMachine> | undefined;
  #stopped = false;
  readonly #persistence: SessionPersistence | undefined;
  readonly #sessionId: string | undefined;
  readonly #inspection: InspectionAttachment | undefined;
  readonly #secrets: readonly string[];

  constructor(options: AgentOptions<TOutput>) {
    const client = createOpenAIClient(options);
    this.redactor = createRedactor({
      knownSecrets: [client.apiKey, options.apiKey],
      ...(options.secrets ? { secrets: options.secrets } : {}),
    });
    const audit =
      typeof options.auditLog === 'string'
        ? createAuditLog({ file: options.auditLog, redact: this.redactor })
        : options.auditLog;
    const tools = [...(options.tools ?? []), ...(options.loopControlTools === false ? [] : loopControlTools)];
    this.registry = new ToolRegistry(tools);
    this.#persistence = createPersistence(
      options,
      this.registry,
      (error, what) => this.#reportError(error, what),
      (value) => this.redactor.redactValue(value),
    );
    this.#sessionId = this.#persistence?.id ?? options.sessionId;
    this.#outputSchema = options.outputSchema;

    const model = options.model ?? DEFAULTS.model;
    const prepareMessages =
      options.prepareMessages ??
      (options.contextWindow === false
        ? undefined
        : createContextGuard(model, this.registry.toJSON(), options.contextWindow ?? {}));
    const actors: AgentActors = {
      initialize: async () => (options.initialize ? await options.initialize() : {}),
      callLlm: callLlmCreator({
        client,
        model,
        registry: this.registry,
        stream: options.stream ?? true,
        approval: options.approval ?? 'tool',
        alwaysAllowed: this.alwaysAllowed,
        eagerToolStart: options.eagerToolStart ?? DEFAULTS.eagerToolStart,
        ...(options.toolFormat ? { toolFormat: options.toolFormat } : {}),
        ...(options.request ? { request: options.request } : {}),
        ...(options.retry ? { retry: options.retry } : {}),
        ...(prepareMessages ? { prepareMessages } : {}),
      }),
      runTools: toolRunnerCreator({
        registry: this.registry,
        ...(options.limits?.toolTimeoutMs !== undefined
          ? { toolTimeoutMs: options.limits.toolTimeoutMs }
          : {}),
        ...(options.limits?.maxToolResultChars !== undefined
          ? { maxResultChars: options.limits.maxToolResultChars }
          : {}),
        ...composeToolHooks(this.#persistence?.hooks(), options.toolHooks, audit),
      }),
    };
    const messages: Message[] = [];
    if (options.instructions) messages.push({ role: 'system', content: options.instructions });
    messages.push(...(options.contextMessages ?? []));
    const { toolTimeoutMs: _t, maxToolResultChars: _m, ...limits } = options.limits ?? {};
    this.#secrets = [client.apiKey, options.apiKey, ...(options.secrets ?? [])].filter(
      (s): s is string => typeof s === 'string' && s.length > 0 && s !== 'not-needed',
    );
    this.#inspection = attachInspection(options.inspect, this.#secrets);
    const start = (snapshot: AgentOptions['snapshot'] | undefined): Promise<void> => {
      const actor = createActor(sharedAgentMachine, {
        input: { ...(this.#sessionId ? { sessionId: this.#sessionId } : {}), messages, limits },
        ...(snapshot ? { snapshot } : {}),
        ...(this.#inspection ? { inspect: this.#inspection.observer } : {}),
      });
      bindAgentActors(actor, actors);
      const publish = createEventRedaction(
        this.redactor,
        (event) => this.bus.publish(event),
        (type) => this.bus.hears(type),
      );
      actor.on('*', (event) => {
        publish(event);
        if (event.type === 'turn_end') this.#settleTurn();
      });
      this.#actor = actor;
      this.#persistence?.attach(actor);
      const ready = new Promise<void>((resolve) => {
        const sub = actor.subscribe((s) => {
          if (!s.matches('Initializing')) {
            sub.unsubscribe();
            resolve();
          }
        });
      });
      actor.start();
      for (const name of this.#persistence?.alwaysAllowed ?? []) this.alwaysAllowed.add(name);
      for (const answer of this.#persistence?.afterStart() ?? []) {
        if (answer.approved) this.actor.send({ type: 'APPROVE', toolCallId: answer.toolCallId });
        else
          this.actor.send({
            type: 'REJECT',
            toolCallId: answer.toolCallId,
            ...(answer.reason ? { reason: answer.reason } : {}),
          });
      }
      // A restored snapshot is already past Initializing: no change will come to say so.
      return actor.getSnapshot().matches('Initializing') ? ready : Promise.resolve();
    };
    attachDebugLog(this.bus, options.debug ?? debugFromEnv(), this.redactor.redact);
    const persistence = this.#persistence;
    if (!persistence) {
      this.#ready = start(options.snapshot);
    } else {
      if (options.snapshot) throw new Error('createAgent: give either `snapshot` or `session`, not both');
      this.#ready = persistence.open().then((snapshot) => {
        if (this.#stopped) return;
        return start(snapshot as AgentOptions['snapshot'] | undefined);
      });
      this.#ready.catch((error: unknown) => this.#reportError(error, `loading session "${persistence.id}"`));
    }
  }

  /** The XState actor running the statechart (after `ready()` when a session is loading). */
  get actor(): Actor<AgentMachine> {
    if (!this.#actor) throw new Error('the agent is still loading its session: await agent.ready() first');
    return this.#actor;
  }

  /** Where the session is saved (with `store` or `session`). */
  get store(): SessionStore | undefined {
    return this.#persistence?.store;
  }

  /** What the restore found, when `session` named a saved session. */
  get restoreReport(): RestoreReport | undefined {
    return this.#persistence?.report;
  }

  /** The last saved record of the session (with `store` or `session`). */
  get sessionRecord(): SessionRecord | undefined {
    return this.#persistence?.record;
  }

  /** Saves the session now if the agent rests, and waits until every write so far is durable. */
  async save(): Promise<SessionRecord | undefined> {
    await this.#ready;
    return this.#persistence?.save();
  }

  /** Resolves when every save and transcript write issued so far has settled. */
  async flush(): Promise<void> {
    await this.#ready.catch(() => {});
    await this.#persistence?.flush();
  }

  #reportError(error: unknown, what: string): void {
    const message = this.redactor.redact(
      `${what} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    const context = this.#actor?.getSnapshot().context;
    this.bus.publish({
      type: 'error',
      sessionId: this.#sessionId ?? '',
      turn: context?.turn ?? 0,
      iteration: context?.iteration ?? 0,
      timestamp: Date.now(),
      message,
      code: 'session_store',
    });
  }

  /** The session id (also on every event). */
  get sessionId(): string {
    return this.#actor ? this.context.sessionId : (this.#sessionId ?? '');
  }

  /** Strings inspectors must never show: the API key and the `secrets` option. */
  get inspectionSecrets(): readonly string[] {
    return this.#secrets;
  }

  /** The current top-level state. */
  get state(): AgentStateName {
    if (!this.#actor) return 'Initializing';
    return this.actor.getSnapshot().value as AgentStateName;
  }

  /** The machine context (read-only view). */
  get context(): Readonly<AgentContext> {
    return this.actor.getSnapshot().context;
  }

  /** The conversation so far. */
  get messages(): readonly Message[] {
    return this.context.messages;
  }

  /** Calls waiting for approval. */
  get pendingApprovals(): ToolCallInfo[] {
    const { calls, pending } = this.context;
    return calls
      .filter((c) => pending.includes(c.id))
      .map((c) => ({ toolCallId: c.id, name: c.name, args: c.args ?? c.argsText }));
  }

  /** Resolves once initialization is over (successfully or in the Error state). */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Listens to one event type, or `'*'` for all. Returns a function that stops listening. */
  on<K extends AgentEventType | '*'>(
    type: K,
    listener: (event: K extends AgentEventType ? AgentEvent<K> : AgentEvent) => void,
  ): () => void {
    const bus = this.bus as unknown as {
      on(t: string, l: (e: unknown) => void): void;
      off(t: string, l: (e: unknown) => void): void;
    };
    const fn = listener as (e: unknown) => void;
    bus.on(type, fn);
    return () => bus.off(type, fn);
  }

  /**
   * Sends a user message and resolves when the turn comes to rest (Completed, Interrupted or Error).
   * Approvals are answered meanwhile through `approve` / `reject` (listen for `approval_requested`).
   */
  async send(text: string): Promise<ExecutionResult<TOutput>> {
    await this.#ready;
    const snapshot = this.actor.getSnapshot();
    if (snapshot.matches('Error') && !snapshot.context.initialized) {
      throw new Error(`agent failed to initialize: ${snapshot.context.error?.message ?? 'unknown error'}`);
    }
    if (BUSY.has(this.state))
      throw new Error(`agent is busy (${this.state}); wait for the turn to end or interrupt it`);
    const result = this.#nextTurn();
    this.actor.send({ type: 'USER_MESSAGE', text });
    return result;
  }

  /** Approves a pending call; with `always`, every call of that tool is approved for the rest of the session. */
  approve(toolCallId: string, options: { always?: boolean } = {}): void {
    const call = this.#pendingCall(toolCallId);
    this.#persistence?.recordApproval(toolCallId, true, undefined, options.always ? call.name : undefined);
    this.actor.send({ type: 'APPROVE', toolCallId });
    if (options.always) {
      this.alwaysAllowed.add(call.name);
      for (const other of this.pendingApprovals) {
        if (other.name !== call.name) continue;
        this.#persistence?.recordApproval(other.toolCallId, true);
        this.actor.send({ type: 'APPROVE', toolCallId: other.toolCallId });
      }
    }
  }

  /** Declines a pending call; the model is told the user declined (with the reason). */
  reject(toolCallId: string, reason?: string): void {
    this.#pendingCall(toolCallId);
    this.#persistence?.recordApproval(toolCallId, false, reason);
    this.actor.send(
      reason === undefined ? { type: 'REJECT', toolCallId } : { type: 'REJECT', toolCallId, reason },
    );
  }

  /**
   * Stops the running turn: the model request and running tools are aborted, every unanswered call gets
   * an `interrupted` result, and the agent rests in Interrupted. Does nothing when no turn runs.
   */
  interrupt(reason?: string): void {
    if (!BUSY.has(this.state)) return;
    this.actor.send(reason === undefined ? { type: 'INTERRUPT' } : { type: 'INTERRUPT', reason });
  }

  /** Continues an interrupted (or failed) turn without a new user message. */
  async resume(): Promise<ExecutionResult<TOutput>> {
    await this.#ready;
    if (!this.actor.getSnapshot().can({ type: 'RESUME' })) {
      throw new Error(`nothing to resume in state ${this.state}`);
    }
    const result = this.#nextTurn();
    this.actor.send({ type: 'RESUME' });
    return result;
  }

  /**
   * Raises the iteration limit of the current turn by `by` (default `DEFAULTS.extendIterationsBy`).
   * When the last turn ended at the limit, the turn continues and the promise gives its new result;
   * otherwise it resolves to `null` at once.
   */
  async extendLimit(by?: number): Promise<ExecutionResult<TOutput> | null> {
    const event =
      by === undefined ? { type: 'EXTEND_LIMIT' as const } : { type: 'EXTEND_LIMIT' as const, by };
    const continues = this.state === 'Completed' && this.context.terminateReason === 'max_iterations';
    if (!continues) {
      this.actor.send(event);
      return null;
    }
    const result = this.#nextTurn();
    this.actor.send(event);
    return result;
  }

  /** The machine's persisted snapshot (save it at rest points only). */
  getPersistedSnapshot() {
    return this.actor.getPersistedSnapshot();
  }

  /** Stops the actor; running requests and tools are aborted. */
  stop(): void {
    this.#stopped = true;
    this.#actor?.stop();
    this.#inspection?.stop();
  }

  /** The result of the last turn as it stands. */
  result(): ExecutionResult<TOutput> {
    const context = this.context;
    const result: ExecutionResult<TOutput> = {
      success: context.terminateReason === 'completed' || context.terminateReason === 'question',
      response: context.response,
      iterations: context.iteration,
      messages: [...context.messages],
      terminateReason: context.terminateReason ?? 'completed',
      usage: context.turnUsage,
    };
    if (context.error) result.error = context.error.message;
    if (this.#outputSchema && result.success) this.#validateOutput(result, this.#outputSchema);
    return result;
  }

  #validateOutput(result: ExecutionResult<TOutput>, schema: ZodType<TOutput>): void {
    const text = result.response
      .trim()
      .replace(/^```(?:json)?\s*/i, '')
      .replace(/```$/, '');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      result.outputError = `the response is not JSON: ${(error as Error).message}`;
      return;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) result.output = parsed.data;
    else
      result.outputError = parsed.error.issues
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ');
  }

  #nextTurn(): Promise<ExecutionResult<TOutput>> {
    return new Promise((resolve) => this.#turnWaiters.push(resolve));
  }

  #settleTurn(): void {
    const waiters = this.#turnWaiters;
    if (waiters.length === 0) return;
    this.#turnWaiters = [];
    // turn_end is emitted while the transition is applied; read the settled snapshot after it.
    queueMicrotask(() => {
      const result = this.result();
      for (const resolve of waiters) resolve(result);
    });
  }

  #pendingCall(toolCallId: string): ToolCallInfo {
    const pending = this.pendingApprovals;
    const call = pending.find((c) => c.toolCallId === toolCallId);
    if (!call) {
      const ids = pending.map((c) => c.toolCallId).join(', ') || 'none';
      throw new Error(`no pending approval for tool call "${toolCallId}" (pending: ${ids})`);
    }
    return call;
  }
}

/** The session keeper for `store` / `session`, or undefined when the agent is not persisted. */
function createPersistence(
  options: AgentOptions<unknown>,
  registry: ToolRegistry,
  onError: PersistenceErrorHandler,
  redact?: <T>(value: T) => T,
): SessionPersistence | undefined {
  if (options.store === undefined && options.session === undefined) return undefined;
  if (
    options.session !== undefined &&
    options.sessionId !== undefined &&
    options.session !== options.sessionId
  ) {
    throw new Error(`createAgent: session "${options.session}" and sessionId "${options.sessionId}" differ`);
  }
  return new SessionPersistence(
    { ...options, session: options.session ?? options.sessionId, agentName: options.name },
    (name) => registry.get(name)?.idempotent === true,
    onError,
    redact,
  );
}

/**
 * Creates and starts an agent. With `session: id` the saved session is continued (or created under
 * that id); the agent is usable at once, and `ready()` says when the session is loaded.
 */
export function createAgent<TOutput = unknown>(options: AgentOptions<TOutput>): Agent<TOutput> {
  return new Agent(options);
}
