import type {
  ModelCallEndInfo,
  ModelCallStartInfo,
  TelemetryHandle,
  ToolEndInfo,
  ToolStartInfo,
  TraceCarrier,
} from './agent-telemetry.js';

/**
 * What the effect sites call: the agent's telemetry bound to its current turn (the parent of each
 * model attempt and tool run), hooks already guarded. `src/llm` calls the model hooks once per HTTP
 * attempt; `src/tools` calls the tool hooks around each run.
 */
export interface TelemetryScope {
  modelCallStart(info: ModelCallStartInfo): TelemetryHandle;
  modelCallEnd(call: TelemetryHandle, info: ModelCallEndInfo): void;
  /** `startedEarly` is the scope's to know (a model call is still open). */
  toolStart(info: Omit<ToolStartInfo, 'startedEarly'>): TelemetryHandle;
  toolRun<T>(tool: TelemetryHandle, execute: () => T): T;
  toolEnd(tool: TelemetryHandle, info: ToolEndInfo): void;
  /** The W3C trace context of a handle (a tool run's), for a tool to send on; absent or `undefined` without one. */
  carrierOf?(handle: TelemetryHandle): TraceCarrier | undefined;
}
