import { DEFAULTS } from '../../defaults.js';
import type { TelemetryScope } from '../../telemetry/telemetry-scope.js';
import {
  type ExecuteToolCallOptions,
  executeToolCall,
  reportLedgerResult,
} from '../../tools/execute-tool-call.js';
import type { ToolCallRequest, ToolResult } from '../../tools/tool-call.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';

import type { EffectIO } from '../effect-io.js';
/** Input of the `runTools` actor: the calls to run and the turn they belong to. */
export interface RunToolsInput {
  sessionId: string;
  turn: number;
  iteration: number;
  calls: ToolCallRequest[];
  /** Epoch ms at which the turn's time is up; calls are cut short then. */
  deadline: number | null;
}

/** Hooks around each call: persistence writes the transcript ledger through them. */
export interface ToolRunHooks {
  /**
   * Called before a call runs. Returning a result skips the run and uses it (a result recorded before
   * a crash); the promise is awaited, so a transcript write finishes before the tool starts.
   */
  beforeRun?: (call: ToolCallRequest, input: RunToolsInput) => Promise<ToolResult | undefined> | undefined;
  /** Called after a call finished, before the machine hears of it. */
  afterRun?: (result: ToolResult, call: ToolCallRequest, input: RunToolsInput) => Promise<void> | void;
}

export interface ToolRunnerOptions extends ToolRunHooks {
  registry: ToolRegistry;
  /** Per-call timeout when the tool sets none. */
  toolTimeoutMs?: number;
  /** Results longer than this are truncated with a note. */
  maxResultChars?: number;
  /** The agent's telemetry: each run is reported (a result from the ledger too). */
  telemetry?: TelemetryScope | undefined;
}

/**
 * The `runTools` effect: runs all given calls in parallel (`Promise.all`), each with the actor's
 * abort signal and its own timeout, reporting `TOOL.FINISHED` to the machine as each ends, except the
 * call that ends last: the actor's output (every result) reports that one, so a one-call batch sends
 * no event at all and the machine takes one step less. (The machine announces the starts itself, as
 * it spawns the runner.) Failures become error results; the effect itself never rejects.
 */
export function runToolsEffect(
  options: ToolRunnerOptions,
): (input: RunToolsInput, io: EffectIO) => Promise<ToolResult[]> {
  const { registry, beforeRun, afterRun, telemetry } = options;
  const timeoutMs = options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs;
  const maxResultChars = options.maxResultChars ?? DEFAULTS.maxToolResultChars;

  return async (input, io) => {
    // A tool's progress becomes a machine event only while someone listens for `tool_progress`.
    const progress: ExecuteToolCallOptions['progress'] = (call, report) => {
      if (io.hears?.('tool_progress') === false) return;
      io.send({ type: 'TOOL.PROGRESS', ...call, ...report });
    };
    let unfinished = input.calls.length;
    // The last call to finish is left to the done event (see above).
    const finished = (result: ToolResult) => {
      unfinished--;
      if (unfinished > 0) io.send({ type: 'TOOL.FINISHED', result });
    };
    const runOne = async (call: ToolCallRequest): Promise<ToolResult> => {
      try {
        return await runChecked(call);
      } catch (error) {
        // A failing hook (a transcript write) must still give the call its one result.
        const message = error instanceof Error ? error.message : String(error);
        const result: ToolResult = {
          toolCallId: call.id,
          name: call.name,
          content: `Error: the call could not be run: ${message}`,
          isError: true,
          durationMs: 0,
        };
        finished(result);
        return result;
      }
    };
    const runChecked = async (call: ToolCallRequest): Promise<ToolResult> => {
      const recorded = beforeRun ? await beforeRun(call, input) : undefined;
      if (io.aborted) throw io.reason;
      if (recorded && telemetry) reportLedgerResult(telemetry, registry, call, input.sessionId, recorded);
      const result =
        recorded ??
        (await executeToolCall(registry, call, {
          stop: io,
          timeoutMs,
          deadline: input.deadline,
          maxResultChars,
          telemetry,
          progress,
          // A plain object, the conversation read now (`executeToolCall` copies it into the tool's context
          // at once): a getter here made the object and each copy of it a slow path of the engine, about
          // 3 µs a call on Node 20 (bench/README.md, llm36).
          context: {
            sessionId: input.sessionId,
            turn: input.turn,
            iteration: input.iteration,
            messages: io.conversation?.() ?? [],
          },
        }));
      if (afterRun && !recorded) await afterRun(result, call, input);
      finished(result);
      return result;
    };
    // `runOne` never rejects (every failure becomes the call's error result): `all` keeps every result.
    return Promise.all(input.calls.map(runOne));
  };
}
