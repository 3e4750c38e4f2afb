import { fromSignal, LazyAbort, type StopNotice } from '../llm/call-abort.js';
import { copyWith } from '../object-copy.js';
import type { ToolEndInfo } from '../telemetry/agent-telemetry.js';
import type { TelemetryScope } from '../telemetry/telemetry-scope.js';
import { toolTelemetry } from '../telemetry/trace-parent.js';
import type { ToolContext, ToolProgress } from './define-tool.js';
import { idempotencyKeyFor } from './idempotency-key.js';
import type { ToolCallRequest, ToolResult } from './tool-call.js';
import type { ToolRegistry } from './tool-registry.js';

/**
 * How a running call hears that it must stop (an interrupt, the agent stopping). Lighter than an
 * AbortSignal, which costs an AbortController per runner even when no tool reads it; `fromSignal`
 * adapts one. The model call hears its stop the same way (src/llm/call-abort.ts).
 */
export type { StopNotice };
export { fromSignal };

/** Options for running one call. */
export interface ExecuteToolCallOptions {
  stop: StopNotice;
  timeoutMs: number;
  /** Epoch ms after which the turn is over; the call is cut short then. */
  deadline: number | null;
  /** Results longer than this are truncated with a note saying how much was cut. */
  maxResultChars: number;
  context: Omit<ToolContext, 'signal' | 'toolCallId' | 'idempotencyKey' | 'telemetry' | 'progress'>;
  /** The agent's telemetry: the run is reported, and `execute` runs inside its context. */
  telemetry?: TelemetryScope | undefined;
  /** Hears what the tool reports through `ctx.progress` while the call runs (checked; none after it ended). */
  progress?: ((call: { toolCallId: string; name: string }, report: ToolProgress) => void) | undefined;
}

/** Why a call failed, as telemetry's `error.type` names it. */
type ToolErrorType = 'unknown_tool' | 'invalid_arguments' | 'interrupted' | 'timeout' | 'tool_error';

class ToolTimeoutError extends Error {
  constructor(
    readonly ms: number,
    readonly deadline: boolean,
  ) {
    super(deadline ? `the turn's deadline passed while it ran` : `timed out after ${ms} ms`);
  }
}

/**
 * Runs one tool call and turns every failure (unknown tool, bad JSON, schema violation, a throw, a
 * timeout, an abort) into an error result the model can read. Never rejects.
 */
export async function executeToolCall(
  registry: ToolRegistry,
  call: ToolCallRequest,
  options: ExecuteToolCallOptions,
): Promise<ToolResult> {
  const started = performance.now();
  const telemetry = options.telemetry;
  const idempotencyKey = idempotencyKeyFor(options.context.sessionId, call.id);
  const span = telemetry?.toolStart(toolStartInfo(call, registry, idempotencyKey));
  /** The call has its result: later progress reports are dropped. */
  let ended = false;
  const finish = (content: string, errorType?: ToolErrorType, deadlineExceeded = false): ToolResult => {
    ended = true;
    const result: ToolResult = {
      toolCallId: call.id,
      name: call.name,
      content: truncate(content, options.maxResultChars),
      isError: errorType !== undefined,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    };
    if (deadlineExceeded) result.deadlineExceeded = true;
    telemetry?.toolEnd(span, toolEndInfo(result.content, errorType));
    return result;
  };

  if (call.problem !== undefined) return finish(`Error: ${call.problem}.`, 'unknown_tool');
  const tool = registry.get(call.name);
  if (!tool) {
    const names = registry.names.join(', ') || '(none)';
    return finish(`Error: unknown tool "${call.name}". Available tools: ${names}.`, 'unknown_tool');
  }
  if (call.args === undefined) {
    return finish(
      `Error: the arguments of this "${call.name}" call are not valid JSON: ${preview(call.argsText)}. ` +
        'Send a JSON object matching the tool schema.',
      'invalid_arguments',
    );
  }
  const parsed = tool.parameters.safeParse(call.args);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
      .join('; ');
    return finish(`Error: invalid arguments for "${call.name}": ${issues}.`, 'invalid_arguments');
  }

  if (options.stop.aborted) return finish('Error: interrupted before the tool started.', 'interrupted');
  const budget = tool.timeoutMs ?? options.timeoutMs;
  const untilDeadline = options.deadline === null ? Number.POSITIVE_INFINITY : options.deadline - Date.now();
  const byDeadline = untilDeadline < budget;
  const waitMs = Math.max(0, Math.min(budget, untilDeadline));

  // The tool's signal is made when it first reads it (`LazyAbort`): most tools never do.
  const run = new LazyAbort();
  const hear = options.progress;
  const context = toolContext(options.context, call.id, idempotencyKey, run, (report) => {
    const checked = checkedProgress(report, call.name);
    if (!ended && hear) hear({ toolCallId: call.id, name: call.name }, checked);
  });
  if (span !== undefined && telemetry)
    context.telemetry = toolTelemetry(span, telemetry.carrierOf && (() => telemetry.carrierOf?.(span)));
  const failed = (error: unknown): ToolResult => {
    if (error instanceof ToolTimeoutError) {
      return finish(
        `Error: tool "${call.name}" ${error.message}; it was stopped.`,
        'timeout',
        error.deadline,
      );
    }
    if (options.stop.aborted)
      return finish('Error: interrupted by the user before the tool finished.', 'interrupted');
    return finish(`Error: ${describe(error)}`, 'tool_error');
  };
  // Called at once, not a microtask later: a call started early from a stream begins in the machine
  // step that spawned its runner (bench figure 3). A tool that answers at once (no promise) is done:
  // nothing can stop or time it out any more, so it needs no timer and no stop listener.
  let returned: unknown;
  try {
    const data = parsed.data;
    returned = telemetry
      ? telemetry.toolRun(span, () => tool.execute(data, context))
      : tool.execute(data, context);
  } catch (error) {
    return failed(error);
  }
  if (!isThenable(returned)) return finish(serialize(returned));

  let timer: ReturnType<typeof setTimeout> | undefined;
  let unlisten: (() => void) | undefined;
  try {
    const value = await new Promise<unknown>((resolve, reject) => {
      const stop = (reason: unknown) => {
        run.abort(reason);
        reject(reason);
      };
      unlisten = options.stop.onAbort(() => stop(options.stop.reason));
      if (Number.isFinite(waitMs))
        timer = setTimeout(() => stop(new ToolTimeoutError(budget, byDeadline)), waitMs);
      returned.then(resolve, reject);
    });
    return finish(serialize(value));
  } catch (error) {
    return failed(error);
  } finally {
    clearTimeout(timer);
    unlisten?.();
  }
}

/** Where a tool's context keeps its call's `LazyAbort` (not enumerable: spreads and JSON miss it). */
const RUN = Symbol('agentloop.toolRun');

/**
 * The context a tool's `execute` gets: the caller's fields (`options.context`, its getters read once),
 * the call's id, key and `progress`, and `signal` as an enumerable getter made lazily.
 *
 * Made with `copyWith` and one getter shared by every context, not as an object literal spreading
 * `options.context` with a getter of its own: on Node 20 that literal took about 3 µs a tool call (a
 * key added after a spread takes the engine's slow path, and a getter made per object gives each
 * context a hidden class of its own; bench/README.md, llm36).
 */
function toolContext(
  base: ExecuteToolCallOptions['context'],
  toolCallId: string,
  idempotencyKey: string,
  run: LazyAbort,
  progress: ToolContext['progress'],
): ToolContext {
  const context = copyWith(base, { toolCallId, idempotencyKey, progress }) as ToolContext;
  Object.defineProperty(context, RUN, { value: run });
  Object.defineProperty(context, 'signal', SIGNAL);
  return context;
}

const SIGNAL: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { [RUN]: LazyAbort }): AbortSignal {
    return this[RUN].signal;
  },
};

/**
 * Tells telemetry of a call whose result the transcript's ledger gave after a restore: nothing ran,
 * and its span says so (`fromLedger`).
 */
export function reportLedgerResult(
  telemetry: TelemetryScope,
  registry: ToolRegistry,
  call: ToolCallRequest,
  sessionId: string,
  result: ToolResult,
): void {
  const info = toolStartInfo(call, registry, idempotencyKeyFor(sessionId, call.id));
  const span = telemetry.toolStart(copyWith(info, { fromLedger: true }));
  telemetry.toolEnd(span, toolEndInfo(result.content, result.isError ? 'tool_error' : undefined));
}

/** What telemetry hears of a call as it ends: a failed one's message is its result without `Error: `. */
function toolEndInfo(content: string, errorType: string | undefined): ToolEndInfo {
  if (errorType === undefined) return { result: content };
  return { errorType, errorMessage: content.replace(/^Error: /, ''), result: content };
}

/** What telemetry hears of a call as it starts. */
function toolStartInfo(call: ToolCallRequest, registry: ToolRegistry, idempotencyKey: string) {
  const tool = registry.get(call.name);
  return {
    name: call.name,
    toolCallId: call.id,
    arguments: call.argsText,
    idempotencyKey,
    ...(tool?.mcp ? { mcp: tool.mcp } : {}),
    ...(tool ? { description: tool.description } : {}),
  };
}

/**
 * A progress report as the tool gave it, checked: a TypeError naming the tool and the field when a
 * field has the wrong type (a bug in the tool, shown where it is made). Unknown fields are dropped.
 */
function checkedProgress(report: unknown, tool: string): ToolProgress {
  const where = `ctx.progress (tool "${tool}")`;
  if (typeof report !== 'object' || report === null || Array.isArray(report))
    throw new TypeError(`${where}: give an object { message?, progress?, total?, data? }`);
  const { message, progress, total, data } = report as Record<string, unknown>;
  const checked: ToolProgress = {};
  if (message !== undefined) {
    if (typeof message !== 'string') throw new TypeError(`${where}: message must be a string`);
    checked.message = message;
  }
  for (const [key, value] of [
    ['progress', progress],
    ['total', total],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new TypeError(`${where}: ${key} must be a finite number`);
    checked[key] = value;
  }
  if (data !== undefined) checked.data = data;
  return checked;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function serialize(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function preview(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

function truncate(content: string, max: number): string {
  if (content.length <= max) return content;
  const cut = content.length - max;
  return `${content.slice(0, max)}\n[truncated: ${cut} of ${content.length} characters cut]`;
}
