import type { TraceCarrier } from './agent-telemetry.js';

/** The transcript event that keeps a turn's trace context while it waits for an approval. */
export const TRACE_CONTEXT_EVENT = 'trace_context';

/**
 * What the transcript keeps when a turn starts waiting for approval: its trace context (the
 * `invoke_agent` span's) and when the wait began, so that the process that answers (a worker, a
 * restarted CLI) continues the same trace: its `await_approval` spans the real wait, and the
 * continuation's turn is its child.
 */
export interface TraceContextRecord extends TraceCarrier {
  /** The turn waiting (the machine's turn number). */
  turn: number;
  /** When the wait began (epoch ms). */
  requestedAt: number;
}

/**
 * The last trace context a transcript kept, read defensively (a transcript is a file: anything that
 * is not a record is skipped).
 */
export function lastTraceContext(
  entries: Iterable<{ kind: string; event?: string; data?: unknown }>,
): TraceContextRecord | undefined {
  let found: TraceContextRecord | undefined;
  for (const entry of entries) {
    if (entry.kind !== 'event' || entry.event !== TRACE_CONTEXT_EVENT) continue;
    const d = entry.data as Partial<TraceContextRecord> | undefined;
    if (
      typeof d?.traceparent !== 'string' ||
      !Number.isSafeInteger(d.turn) ||
      typeof d.requestedAt !== 'number' ||
      !Number.isFinite(d.requestedAt)
    )
      continue;
    found = { traceparent: d.traceparent, turn: d.turn!, requestedAt: d.requestedAt };
    if (typeof d.tracestate === 'string') found.tracestate = d.tracestate;
  }
  return found;
}
