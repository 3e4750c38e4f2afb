import { DEFAULTS } from '../defaults.js';
import type { AgentContext } from '../machines/agent-context.js';
import type { AgentEvent, ToolCallInfo } from '../machines/emitted-events.js';
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

/** What the agent's telemetry needs to know of the agent. */
export interface TurnTelemetryBase {
  sessionId: () => string;
  agentName: string;
  model: string;
  baseUrl: string;
  redact: <T>(value: T) => T;
  /** Reports a hook that threw (an `error` event). */
  report: (message: string) => void;
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
   * carried trace context (`SessionClient`, the transcript).
   */
  startTurn(kind: TurnStartInfo['kind'], input?: string, parent?: TelemetryHandle | TraceCarrier): void {
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
    const from = isCarrier(parent) ? this.#hooks.fromCarrier(parent) : parent;
    if (from !== undefined) info.parent = from;
    this.#turn = this.#hooks.turnStart(info);
    this.#open = true;
    this.#waitMs = 0;
    this.#modelCalls = 0;
  }

  /** What the machine emitted: approval waits begin; a turn comes to rest. */
  onEvent(event: AgentEvent, context: () => Readonly<AgentContext>): void {
    if (event.type === 'approval_requested') this.#requested(event.pending, event.timestamp);
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

  /** An approval wait begins for each call not already waiting (in this process or, restored, since `at`). */
  #requested(pending: readonly ToolCallInfo[], at: number): void {
    for (const call of pending) {
      if (this.#approvals.has(call.toolCallId)) continue;
      const handle = this.#hooks.approvalRequested(this.#turn, {
        sessionId: this.#base.sessionId(),
        name: call.name,
        toolCallId: call.toolCallId,
        requestedAt: at,
      });
      this.#approvals.set(call.toolCallId, { handle, requestedAt: at });
    }
  }

  /**
   * The user answered a pending call (`by`: this process's API or an inbox item). Returns the wait's
   * handle: a continuation in another process is its child.
   */
  answered(answer: { toolCallId: string; approved: boolean; always?: boolean }, by: 'local' | 'inbox') {
    const wait = this.#approvals.get(answer.toolCallId);
    if (!wait) return undefined;
    this.#approvals.delete(answer.toolCallId);
    this.#waitMs += Math.max(0, Date.now() - wait.requestedAt);
    this.#hooks.approvalResolved(wait.handle, {
      decision: answer.approved ? 'approved' : 'rejected',
      answeredBy: by,
      ...(answer.always ? { always: true } : {}),
    });
    return wait.handle;
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
    return this.#hooks.toolStart(this.#turn, { ...info, startedEarly: this.#modelCalls > 0 });
  }

  toolRun<T>(tool: TelemetryHandle, execute: () => T): T {
    return this.#hooks.toolRun(tool, execute);
  }

  toolEnd(tool: TelemetryHandle, info: ToolEndInfo): void {
    this.#hooks.toolEnd(tool, info);
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

function isCarrier(value: unknown): value is TraceCarrier {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { traceparent?: unknown }).traceparent === 'string'
  );
}
