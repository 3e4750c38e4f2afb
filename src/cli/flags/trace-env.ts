import type { AgentTelemetry, TraceCarrier } from '../../telemetry/agent-telemetry.js';
import { validCarrier } from '../../telemetry/trace-parent.js';

/**
 * The caller's trace context from the environment: `TRACEPARENT` and `TRACESTATE`, OpenTelemetry's
 * environment-carrier convention (what an evaluation tool or a CI system sets for the process it
 * starts). `undefined` when `TRACEPARENT` is unset; an `error` naming the variable when it is not a
 * W3C traceparent.
 */
export function traceCarrierFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): { carrier: TraceCarrier } | { error: string } | undefined {
  const traceparent = env.TRACEPARENT?.trim();
  if (!traceparent) return undefined;
  const carrier = validCarrier({
    traceparent,
    ...(env.TRACESTATE?.trim() ? { tracestate: env.TRACESTATE.trim() } : {}),
  });
  if (carrier) return { carrier };
  const shown = JSON.stringify(traceparent.length > 80 ? `${traceparent.slice(0, 80)}…` : traceparent);
  return {
    error: `TRACEPARENT is not a W3C traceparent ("00-<32 hex trace id>-<16 hex span id>-<2 hex flags>"): ${shown}`,
  };
}

/**
 * The telemetry with every turn that has no parent of its own (a user's message, a resume) parented
 * on `carrier`; turns that have one (a subagent's, a continuation after an approval, a message a
 * worker carries with its sender's context) keep it.
 */
export function parentedOn(telemetry: AgentTelemetry, carrier: TraceCarrier): AgentTelemetry {
  const { turnStart, fromCarrier } = telemetry;
  if (!turnStart || !fromCarrier) return telemetry;
  return {
    ...telemetry,
    turnStart: (info) =>
      turnStart.call(telemetry, info.parent === undefined ? { ...info, parent: fromCarrier(carrier) } : info),
  };
}
