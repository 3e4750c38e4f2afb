import type { Actor } from 'xstate';
import type { ZodType } from 'zod';
import { AgentEventBus } from '../events/event-bus.js';
import type { Redactor } from '../events/redact.js';
import type { Message } from '../llm/message.js';
import type { AgentContext } from '../machines/agent-context.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import { type AgentStateName, isBusyState } from '../machines/agent-states.js';
import type { AgentEvent, AgentEventType, ToolCallInfo } from '../machines/emitted-events.js';
import { pendingApprovals } from '../machines/tool-batch.js';
import type { McpServerStatus } from '../mcp/mcp-servers.js';
import type { RestoreReport } from '../session/restore-plan.js';
import type { SessionRecord, SessionStore } from '../session/session-store.js';
import type { SkillDiscovery } from '../skills/skill-discovery.js';
import { checkTraceParent, type TraceParent } from '../telemetry/trace-parent.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { Plan } from '../tools/update-plan-tool.js';
import type { InspectionAttachment } from './agent-inspection.js';
import type { AgentOptions, ExecutionResult } from './agent-options.js';
import { type AgentParts, agentParts } from './agent-parts.js';
import { TurnSettler } from './agent-persistence.js';
import type { AgentSkills } from './agent-skills.js';
import { loadAndStart } from './agent-start.js';
import type { AgentTools } from './agent-tools.js';
import { type ApprovalAnswer, approvalAnswer, approvalEvent, pendingCallFor } from './approval-answer.js';
import { type CompactResult, compactOnRequest } from './compact-on-request.js';
import { errorEvent, listen } from './event-relay.js';
import { sendRefusal } from './send-refusal.js';
import { errorText, stoppedResult, turnResult } from './turn-result.js';
import type { TurnTelemetry } from './turn-telemetry.js';

export type { AgentStateName } from '../machines/agent-states.js';
export type { AgentOptions, ExecutionResult } from './agent-options.js';

/**
 * A running agent: the statechart bound to an OpenAI client and tools, with a typed event bus.
 * Create it with `createAgent`.
 */
export class Agent<TOutput = unknown> {
  readonly bus = new AgentEventBus();
  readonly registry: ToolRegistry;
  /** Replaces the API key, `OPENAI_API_KEY` and the `secrets` option in text and values (transcript writers use it). */
  readonly redactor: Redactor;
  /** Strings inspectors must never show: the API key and the `secrets` option. */
  readonly inspectionSecrets: readonly string[];
  readonly #options: AgentOptions<TOutput>;
  readonly #persistence: AgentParts['persistence'];
  readonly #inspection: InspectionAttachment | undefined;
  #turnWaiters: ((result: ExecutionResult<TOutput>) => void)[] = [];
  readonly #settler: TurnSettler<ExecutionResult<TOutput>>;
  #queued: (ApprovalAnswer | { interrupt: true; reason?: string | undefined })[] = []; // given while loading
  #ready: Promise<void>;
  #actor: Actor<AgentMachine> | undefined;
  #stopped = false;
  #compacting: AbortController | undefined; // while `compact()` runs
  readonly #mcp: AgentTools['mcp'];
  #closed: Promise<void> | undefined; // resolves once the MCP servers are closed (set by `stop()`)
  #loadError: unknown; // why the session could not be loaded (the agent then never starts)
  readonly #skills: AgentSkills | undefined;
  readonly #telemetry: TurnTelemetry | undefined;

  constructor(options: AgentOptions<TOutput>) {
    this.#options = options;
    const parts = agentParts(options, {
      bus: this.bus,
      sessionId: () => this.sessionId,
      publishError: (message, code) => this.#publishError(message, code),
      writeFailed: (error, what) => this.#writeFailed(error, what),
    });
    const { effects } = parts;
    this.redactor = parts.redactor;
    this.inspectionSecrets = parts.inspectionSecrets;
    this.registry = parts.registry;
    this.#mcp = parts.mcp;
    this.#skills = parts.skills;
    this.#telemetry = parts.telemetry;
    this.#persistence = parts.persistence;
    this.#inspection = parts.inspection;
    this.#settler = new TurnSettler(this.#persistence, () => this.result());
    this.#ready = loadAndStart(
      {
        options: options as AgentOptions<unknown>,
        effects,
        persistence: this.#persistence,
        inspection: this.#inspection,
        bus: this.bus,
        redactor: this.redactor,
        created: (actor) => {
          this.#actor = actor;
        },
        // A turn came to rest: its callers get the result once its writes are durable (TurnSettler).
        onEvent: (event) => {
          this.#telemetry?.onEvent(event, () => this.context);
          if (event.type === 'turn_end') this.#settler.settle(this.#turnWaiters.splice(0));
        },
        // Approvals recorded after the last save, then what was given while the session loaded.
        apply: (input) => ('interrupt' in input ? this.interrupt(input.reason) : this.#answer(input)),
        queued: () => this.#queued.splice(0),
        publishError: (message, code) => this.#publishError(message, code),
        stopped: () => this.#stopped,
        loadFailed: (error) => {
          this.#loadError = error;
        },
      },
      this.#skills?.setup,
      this.#mcp?.start(),
    );
  }

  /** The XState actor running the statechart (after `ready()` when a session is loading). */
  get actor(): Actor<AgentMachine> {
    if (this.#actor) return this.#actor;
    if (this.#loadError !== undefined) {
      const reason = `the agent did not start: its session could not be loaded: ${errorText(this.#loadError)}`;
      throw new Error(this.redactor.redact(reason), { cause: this.redactor.redactValue(this.#loadError) });
    }
    throw new Error('the agent is still starting (its session or MCP servers): await agent.ready() first');
  }

  /** Where the session is saved (with `store` or `session`). */
  get store(): SessionStore | undefined {
    return this.#persistence?.store;
  }

  /** What the restore found, when `session` named a saved session. */
  get restoreReport(): RestoreReport | undefined {
    return this.#persistence?.report;
  }

  /** What `options.skills` found (skills and problems), once `ready()` resolved. */
  get skills(): SkillDiscovery | undefined {
    return this.#skills?.discovery;
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

  /** A failed write ends the turn it belongs to in Error, naming the write; with no turn to end, it is reported. */
  #writeFailed(error: unknown, what: string): void {
    const message = this.redactor.redact(`${what} failed: ${errorText(error)}`);
    if (!this.#settler.endTurn(this.#actor, message)) this.#publishError(message, 'session_store');
  }

  /** An `error` event the machine does not emit itself (store failures, what a restore found). */
  #publishError(message: string, code: string): void {
    this.bus.publish(errorEvent(this.#actor, this.sessionId, this.redactor.redact(message), code));
  }

  /** The session id (also on every event). */
  get sessionId(): string {
    return this.#actor ? this.context.sessionId : (this.#persistence?.id ?? this.#options.sessionId ?? '');
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

  /** The agent's plan (`update_plan`), or `null` before it makes one. */
  get plan(): Plan | null {
    return this.#actor ? this.context.plan : null;
  }

  /** The MCP servers (`mcpServers`): each one's state and the names its tools are offered under. */
  get mcpServers(): McpServerStatus[] {
    return this.#mcp?.servers ?? [];
  }

  /** Calls waiting for approval. */
  get pendingApprovals(): ToolCallInfo[] {
    return pendingApprovals(this.context.batch);
  }

  /** Tools the user allowed for the rest of the session (`approve(id, { always: true })`). */
  get alwaysAllowed(): ReadonlySet<string> {
    return new Set(this.#actor ? this.context.alwaysAllowed : []);
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
    return listen(this.bus, type, listener as (e: unknown) => void);
  }

  /**
   * Sends a user message; resolves when the turn rests (Completed, Interrupted or Error). Approvals are
   * answered meanwhile with `approve` / `reject`. `inbox`: the inbox item it comes from (workers);
   * `traceParent`: the turn's parent (a `traceparent` text, a carrier, a tool's `ctx.telemetry`).
   */
  async send(
    text: string,
    options: { inbox?: number; traceParent?: TraceParent | undefined } = {},
  ): Promise<ExecutionResult<TOutput>> {
    const parent = checkTraceParent(options.traceParent, 'agent.send');
    this.#assertRunning();
    await this.#ready;
    this.#assertRunning();
    const refusal = sendRefusal(this.state, this.actor.getSnapshot().context);
    if (refusal) throw new Error(refusal);
    this.#persistence?.tagNextUserMessage(options.inbox);
    this.#telemetry?.startTurn('message', text, parent);
    return this.#turn({ type: 'USER_MESSAGE', text, at: Date.now() });
  }

  /** Approves a pending call (`always`: every call of its tool, for the session); queued while loading. */
  approve(toolCallId: string, options: { always?: boolean; inbox?: number } = {}): void {
    this.#answerOrQueue(approvalAnswer(toolCallId, true, options));
  }

  /** Declines a pending call; the model is told the user declined (with the reason). */
  reject(toolCallId: string, reason?: string, options: { inbox?: number } = {}): void {
    this.#answerOrQueue(approvalAnswer(toolCallId, false, { reason, inbox: options.inbox }));
  }

  #answerOrQueue(answer: ApprovalAnswer): void {
    this.#assertRunning();
    if (this.#actor) this.#answer(answer, true);
    else this.#queued.push(answer);
  }

  /** Records and sends one answer; an answer to a call that is not pending throws (`strict`) or is reported. */
  #answer(answer: ApprovalAnswer, strict = false): void {
    const call = pendingCallFor(this.pendingApprovals, answer.toolCallId);
    if (call instanceof Error) {
      if (strict) throw call;
      this.#publishError(`an approval answered while the session loaded failed: ${call.message}`, 'approval');
      return;
    }
    this.#persistence?.recordApproval(answer, answer.always ? call.name : undefined);
    this.#telemetry?.answered(answer, call, this.pendingApprovals.length - 1, this.context.turn);
    this.actor.send(approvalEvent(answer, Date.now()));
  }

  /**
   * Stops the running turn: request and tools aborted, unanswered calls answered `interrupted`, the
   * agent rests in Interrupted. Nothing when no turn runs; queued while a session loads.
   */
  interrupt(reason?: string): void {
    if (!this.#actor && !this.#stopped) return void this.#queued.push({ interrupt: true, reason });
    this.#compacting?.abort(); // a compaction asked for after the turn (`compact()`)
    if (!isBusyState(this.state)) return;
    this.actor.send(reason === undefined ? { type: 'INTERRUPT' } : { type: 'INTERRUPT', reason });
  }

  /** Continues an interrupted (or failed) turn without a new user message. */
  async resume(): Promise<ExecutionResult<TOutput>> {
    this.#assertRunning();
    await this.#ready;
    const event = { type: 'RESUME' as const, at: Date.now() };
    if (!this.actor.getSnapshot().can(event)) {
      throw new Error(`nothing to resume in state ${this.state}`);
    }
    this.#telemetry?.startTurn('resume');
    return this.#turn(event);
  }

  /**
   * Raises the iteration limit of the current turn by `by` (default `DEFAULTS.extendIterationsBy`).
   * When the last turn ended at the limit, the turn continues and the promise gives its new result;
   * otherwise it resolves to `null` at once.
   */
  async extendLimit(by?: number): Promise<ExecutionResult<TOutput> | null> {
    const event = { type: 'EXTEND_LIMIT' as const, at: Date.now(), ...(by !== undefined ? { by } : {}) };
    const continues = this.state === 'Completed' && this.context.terminateReason === 'max_iterations';
    if (!continues) {
      this.actor.send(event);
      return null;
    }
    this.#telemetry?.startTurn('resume');
    return this.#turn(event);
  }

  /**
   * Compacts the conversation now (after a turn): a summary of the older part, focused on `instructions`
   * if given, replaces it in the requests from now on. Resolves with what was done (docs/context-window.md).
   */
  async compact(instructions?: string): Promise<CompactResult> {
    this.#assertRunning();
    await this.#ready;
    this.#compacting = new AbortController();
    try {
      return await compactOnRequest(this.actor, this.#compacting.signal, instructions);
    } finally {
      this.#compacting = undefined;
    }
  }

  /** The machine's persisted snapshot (save it at rest points only). */
  getPersistedSnapshot() {
    return this.actor.getPersistedSnapshot();
  }

  /**
   * Stops the agent for good: requests and tools are aborted, inspection lets go, a turn waiting in
   * `send()` or `resume()` resolves as interrupted ("the agent was stopped"). The saved session keeps
   * its last rest point for another agent; later `send`, `resume`, `approve`, `reject` throw.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#compacting?.abort();
    this.#telemetry?.stopped(this.#actor?.getSnapshot().context);
    this.#actor?.stop();
    this.#persistence?.close();
    this.#closed = this.#mcp?.close() ?? Promise.resolve();
    this.#inspection?.stop();
    const result = stoppedResult<TOutput>(this.#actor?.getSnapshot().context);
    for (const resolve of this.#turnWaiters.splice(0)) resolve(result);
    this.#settler.releaseAll(result);
  }

  /** `stop()`, then waits for its MCP servers, its writes and its lease release (call before exit). */
  async close(): Promise<void> {
    this.stop();
    await Promise.all([this.#closed, this.flush(), this.#persistence?.released()]);
  }

  #assertRunning(): void {
    if (this.#stopped) throw new Error('the agent was stopped (agent.stop()); create a new agent to go on');
  }

  /** The result of the last turn as it stands. */
  result(): ExecutionResult<TOutput> {
    return turnResult(this.context, this.#options.outputSchema as ZodType<TOutput> | undefined);
  }

  /** Sends the event that starts a turn; resolves with the turn's result once it rests. */
  #turn(event: Parameters<Actor<AgentMachine>['send']>[0]): Promise<ExecutionResult<TOutput>> {
    // A new array at its length, not `push`: a pushed-to empty array keeps 16 spare slots while the turn runs.
    const result = new Promise<ExecutionResult<TOutput>>((resolve) => {
      this.#turnWaiters = [...this.#turnWaiters, resolve];
    });
    this.actor.send(event);
    return result;
  }
}

/**
 * Creates and starts an agent. With `session: id` the saved session is continued (or created under
 * that id); the agent is usable at once, and `ready()` says when the session is loaded.
 */
export function createAgent<TOutput = unknown>(options: AgentOptions<TOutput>): Agent<TOutput> {
  return new Agent(options);
}
