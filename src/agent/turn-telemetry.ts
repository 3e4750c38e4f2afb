import { DEFAULTS } from '../defaults.js';
import type { AgentContext } from '../machines/agent-context.js';
import type { AgentEvent, ToolCallInfo } from '../machines/emitted-events.js';
import { copyWith } from '../object-copy.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type {
  AgentTelemetry,
  ModelCallEndInfo,
  ModelCallStartInfo,
  TelemetryHandle,
  ToolEndInfo,
  ToolStartInfo,
  TraceCarrier,
  TurnEndInfo,
  TurnStartInfo,
} from '../telemetry/agent-telemetry.js';
import { guardedTelemetry } from '../telemetry/guarded-telemetry.js';
import type { TelemetryScope } from '../telemetry/telemetry-scope.js';
import { lastTraceContext, type TraceContextRecord } from '../telemetry/trace-context-record.js';
import type { CheckedTraceParent } from '../telemetry/trace-parent.js';

/** What the agent's telemetry needs to know of the agent. */
export interface TurnTelemetryBase {
  sessionId: () => string;
  agentName: string;
  model: string;
  baseUrl: string;
  redact: <T>(value: T) => T;
  /** Reports a hook that threw (an `error` event). */
  report: (message: string) => void;
  /** Keeps a waiting turn's trace context in the session's transcript (persisted agents). */
  keep?: (record: TraceContextRecord) => void;
}

/** A pending approval's wait, as telemetry sees it. */
interface ApprovalWait {
  handle: TelemetryHandle;
  requestedAt: number;
}

/**
 * One agent's telemetry: the user's hooks, guarded, bound to the turn that runs. The agent starts and
 * ends turns (its `send`, `resume`, the machine's `turn_end`, `stop`), tells it of approval waits and
 * answers, and hands it to the effects as their {@link TelemetryScope}: the model call's attempts and
 * the tool runs find their parent, the turn, here, passed explicitly to each hook.
 */
export class TurnTelemetry implements TelemetryScope {
  readonly #hooks: Required<AgentTelemetry>;
  readonly #base: TurnTelemetryBase;
  #turn: TelemetryHandle;
  #open = false;
  /** Model attempts under way: a tool starting meanwhile started before the stream ended. */
  #modelCalls = 0;
  readonly #approvals = new Map<string, ApprovalWait>();
  #waitMs = 0;
  /** The trace context the restored session's transcript kept for its waiting turn. */
  #restored: TraceContextRecord | undefined;

  constructor(telemetry: AgentTelemetry, base: TurnTelemetryBase) {
    this.#hooks = guardedTelemetry(telemetry, base.report);
    this.#base = base;
  }

  /** The hooks (guarded). */
  get hooks(): Required<AgentTelemetry> {
    return this.#hooks;
  }

  /** Whether a turn is open. */
  get turnOpen(): boolean {
    return this.#open;
  }

  /**
   * A turn starts (before the machine hears of it: its first model call may start in the same step).
   * `parent`: an opaque handle (a subagent's tool call, the approval a continuation follows) or a
   * carried trace context (`SessionClient`, the transcript, the caller's `traceParent`).
   */
  startTurn(kind: TurnStartInfo['kind'], input?: string, parent?: CheckedTraceParent): void {
    if (this.#open) this.#end({ terminateReason: 'interrupted' });
    const info: TurnStartInfo = {
      sessionId: this.#base.sessionId(),
      agentName: this.#base.agentName,
      model: this.#base.model,
      baseUrl: this.#base.baseUrl,
      kind,
      redact: this.#base.redact,
    };
    if (input !== undefined) info.input = input;
    const from = parent && ('carrier' in parent ? this.#hooks.fromCarrier(parent.carrier) : parent.handle);
    if (from !== undefined) info.parent = from;
    this.#turn = this.#hooks.turnStart(info);
    this.#open = true;
    this.#waitMs = 0;
    this.#modelCalls = 0;
  }

  /** What the machine emitted: approval waits begin; a turn comes to rest. */
  onEvent(event: AgentEvent, context: () => Readonly<AgentContext>): void {
    if (event.type === 'approval_requested') this.#requested(event.pending, event.timestamp, event.turn);
    else if (event.type === 'turn_end' && this.#open) {
      const ctx = context();
      const end: Omit<TurnEndInfo, 'usage' | 'approvalWaitMs' | 'iterations'> = {
        terminateReason: event.terminateReason,
        response: event.response,
      };
      if (ctx.error && (event.terminateReason === 'error' || event.terminateReason === 'timeout'))
        end.error = ctx.error;
      this.#end(end, ctx);
    }
  }

  /**
   * An approval wait begins for each call not already waiting. A persisted agent keeps the turn's
   * trace context in the transcript, for the process that will answer if this one stops.
   */
  #requested(pending: readonly ToolCallInfo[], at: number, turn: number): void {
    const fresh = pending.filter((call) => !this.#approvals.has(call.toolCallId));
    for (const call of fresh) this.#wait(this.#turn, call, at);
    if (fresh.length === 0 || !this.#base.keep) return;
    const carrier = this.#hooks.carrierOf(this.#turn);
    if (carrier) this.#base.keep(copyWith(carrier, { turn, requestedAt: at }));
  }

  #wait(parent: TelemetryHandle, call: { toolCallId: string; name: string }, at: number): ApprovalWait {
    const handle = this.#hooks.approvalRequested(parent, {
      sessionId: this.#base.sessionId(),
      name: call.name,
      toolCallId: call.toolCallId,
      requestedAt: at,
    });
    const wait = { handle, requestedAt: at };
    this.#approvals.set(call.toolCallId, wait);
    return wait;
  }

  /** A restored session's transcript: the trace context its waiting turn kept, if any. */
  restoredFrom(entries: Parameters<typeof lastTraceContext>[0]): void {
    this.#restored = lastTraceContext(entries);
  }

  /**
   * The user answered the pending `call` (through this process's API, or an inbox item). In a process
   * that restored the session, the wait is the one the transcript kept (from its real start, under the
   * first process's turn), and the answer that lets the machine go on (`remaining` 0) starts the
   * continuation's turn as its child. Call before the machine hears the answer.
   */
  answered(
    answer: { toolCallId: string; approved: boolean; always?: boolean; inbox?: number },
    call: ToolCallInfo,
    remaining: number,
    turn: number,
  ): void {
    let wait = this.#approvals.get(answer.toolCallId);
    const restored = this.#restored;
    if (!wait && !this.#open && restored?.turn === turn)
      wait = this.#wait(this.#hooks.fromCarrier(restored), call, restored.requestedAt);
    if (!wait) {
      // No trace context kept (a session saved without telemetry): the continuation starts a trace.
      if (!this.#open && remaining === 0) this.startTurn('continuation');
      return;
    }
    this.#approvals.delete(answer.toolCallId);
    this.#waitMs += Math.max(0, Date.now() - wait.requestedAt);
    this.#hooks.approvalResolved(wait.handle, {
      decision: answer.approved ? 'approved' : 'rejected',
      answeredBy: answer.inbox === undefined ? 'local' : 'inbox',
      ...(answer.always ? { always: true } : {}),
    });
    if (!this.#open && remaining === 0) {
      const waited = this.#waitMs;
      this.startTurn('continuation', undefined, { handle: wait.handle });
      this.#waitMs = waited;
    }
  }

  /**
   * The agent stops. A turn waiting for approval is suspended (another process may answer it); its
   * waits stay open in the backend, never ended here. Any other open turn ends interrupted.
   */
  stopped(context: Readonly<AgentContext> | undefined): void {
    if (!this.#open) return;
    if (this.#approvals.size > 0) {
      this.#approvals.clear();
      this.#end({ suspended: true }, context, false);
    } else this.#end({ terminateReason: 'interrupted' }, context);
  }

  #end(
    end: Omit<TurnEndInfo, 'usage' | 'approvalWaitMs' | 'iterations'>,
    context?: Readonly<AgentContext>,
    resolveWaits = true,
  ): void {
    if (resolveWaits) {
      for (const wait of this.#approvals.values())
        this.#hooks.approvalResolved(wait.handle, { decision: 'unanswered' });
      this.#approvals.clear();
    }
    const usage = context?.turnUsage;
    this.#hooks.turnEnd(this.#turn, {
      ...end,
      iterations: context?.iteration ?? 0,
      approvalWaitMs: this.#waitMs,
      usage: {
        inputTokens: usage?.promptTokens ?? 0,
        outputTokens: usage?.completionTokens ?? 0,
        ...(usage?.cachedPromptTokens ? { cachedInputTokens: usage.cachedPromptTokens } : {}),
      },
    });
    this.#open = false;
    this.#turn = undefined;
  }

  modelCallStart(info: ModelCallStartInfo): TelemetryHandle {
    this.#modelCalls++;
    return this.#hooks.modelCallStart(this.#turn, info);
  }

  modelCallEnd(call: TelemetryHandle, info: ModelCallEndInfo): void {
    this.#modelCalls = Math.max(0, this.#modelCalls - 1);
    this.#hooks.modelCallEnd(call, info);
  }

  toolStart(info: Omit<ToolStartInfo, 'startedEarly'>): TelemetryHandle {
    return this.#hooks.toolStart(this.#turn, copyWith(info, { startedEarly: this.#modelCalls > 0 }));
  }

  toolRun<T>(tool: TelemetryHandle, execute: () => T): T {
    return this.#hooks.toolRun(tool, execute);
  }

  toolEnd(tool: TelemetryHandle, info: ToolEndInfo): void {
    this.#hooks.toolEnd(tool, info);
  }

  carrierOf(handle: TelemetryHandle): TraceCarrier | undefined {
    return this.#hooks.carrierOf(handle);
  }
}

/** The agent's telemetry when `options.telemetry` is given, named after the agent and its model. */
export function turnTelemetryFor(
  options: { telemetry?: AgentTelemetry | undefined; name?: string | undefined; model?: string | undefined },
  base: Omit<TurnTelemetryBase, 'agentName' | 'model'>,
): TurnTelemetry | undefined {
  if (!options.telemetry) return undefined;
  return new TurnTelemetry(options.telemetry, {
    ...base,
    agentName: options.name ?? 'agent',
    model: options.model ?? DEFAULTS.model,
  });
}

/**
 * The options with `onSessionLoaded` also telling the telemetry what the restored transcript kept
 * (the trace context of a turn waiting for approval).
 */
export function withTraceRestore<
  O extends { onSessionLoaded?: ((entries: readonly TranscriptEntry[]) => void) | undefined },
>(options: O, telemetry: TurnTelemetry | undefined): O {
  if (!telemetry) return options;
  const heard = options.onSessionLoaded;
  return {
    ...options,
    onSessionLoaded: (entries: readonly TranscriptEntry[]) => {
      telemetry.restoredFrom(entries);
      heard?.(entries);
    },
  };
}
