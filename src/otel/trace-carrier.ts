import {
  type Context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from '@opentelemetry/api';
import type { TraceCarrier } from '../telemetry/agent-telemetry.js';
import { parseTraceparent } from '../telemetry/trace-parent.js';

/**
 * The W3C `traceparent` (and `tracestate`) of the span in a context; `undefined` without a valid one.
 * Written by hand rather than through the global propagator, which the library never registers.
 */
export function carrierOfContext(ctx: Context | undefined): TraceCarrier | undefined {
  const span = ctx ? trace.getSpanContext(ctx) : undefined;
  if (!span || !isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: TraceCarrier = { traceparent: `00-${span.traceId}-${span.spanId}-${flags}` };
  const state = span.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/**
 * A context whose parent is the remote span a carrier names; the root context when the carrier is
 * not a valid `traceparent` (a carrier is read from a file or a message: it is checked, never trusted).
 */
export function contextOfCarrier(carrier: TraceCarrier): Context {
  const fields = typeof carrier?.traceparent === 'string' ? parseTraceparent(carrier.traceparent) : undefined;
  if (!fields) return ROOT_CONTEXT;
  const spanContext: SpanContext = {
    traceId: fields.traceId,
    spanId: fields.spanId,
    traceFlags: fields.flags,
    isRemote: true,
  };
  if (typeof carrier.tracestate === 'string' && carrier.tracestate.length <= 512)
    spanContext.traceState = createTraceState(carrier.tracestate);
  if (!isSpanContextValid(spanContext)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}
