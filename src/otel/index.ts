/**
 * `agentloop/otel`: the agent's telemetry as OpenTelemetry GenAI spans and metrics, with
 * `@opentelemetry/api` only (an optional peer dependency; docs/telemetry.md).
 */
export type {
  AgentTelemetry,
  ApprovalRequestInfo,
  ApprovalResolvedInfo,
  ModelCallEndInfo,
  ModelCallStartInfo,
  TelemetryHandle,
  TelemetryUsage,
  ToolEndInfo,
  ToolStartInfo,
  TraceCarrier,
  TurnEndInfo,
  TurnStartInfo,
} from '../telemetry/agent-telemetry.js';
export { type ToolTelemetry, type TraceParent, traceCarrierOf } from '../telemetry/trace-parent.js';
export { type OtelTelemetryOptions, otelTelemetry } from './otel-telemetry.js';
