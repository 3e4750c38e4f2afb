import type { TelemetryHandle, TraceCarrier } from './agent-telemetry.js';

declare const toolTelemetryBrand: unique symbol;

/**
 * A tool call's telemetry as its tool sees it (`ctx.telemetry`): opaque, only passed on, as the
 * `traceParent` of a turn the tool starts (a subagent's), so that the turn is a child of the call.
 */
export interface ToolTelemetry {
  readonly [toolTelemetryBrand]: true;
}

/**
 * The parent of a turn (`agent.send(text, { traceParent })`): a W3C `traceparent` header's text
 * (`00-<trace id>-<span id>-<flags>`), a carrier `{ traceparent, tracestate? }` (the two headers), or
 * a tool call's `ctx.telemetry`.
 */
export type TraceParent = string | TraceCarrier | ToolTelemetry;

/** The ids and flags of a W3C `traceparent`. */
export interface TraceparentFields {
  traceId: string;
  spanId: string;
  /** The trace flags (bit 0: sampled). */
  flags: number;
}

/** Version, trace id, span id, flags; a later version may add fields after a dash. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The fields of a W3C `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header), or
 * `undefined` when the text is not one: lowercase hex, version `ff` refused, version `00` with nothing
 * after the flags, trace and span ids not all zeros. Surrounding blanks are allowed, as in a header.
 */
export function parseTraceparent(text: string): TraceparentFields | undefined {
  const match = TRACEPARENT.exec(text.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, flags: Number.parseInt(flags!, 16) };
}

/** A carrier with its `traceparent` in the version-00 form, when it holds a valid one; else `undefined`. */
export function validCarrier(value: unknown): TraceCarrier | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return undefined;
  const fields = parseTraceparent(traceparent);
  if (!fields || (tracestate !== undefined && typeof tracestate !== 'string')) return undefined;
  const flags = fields.flags.toString(16).padStart(2, '0');
  const carrier: TraceCarrier = { traceparent: `00-${fields.traceId}-${fields.spanId}-${flags}` };
  if (typeof tracestate === 'string' && tracestate.trim() !== '') carrier.tracestate = tracestate.trim();
  return carrier;
}

const handles = new WeakMap<ToolTelemetry, TelemetryHandle>();
const carriers = new WeakMap<ToolTelemetry, () => TraceCarrier | undefined>();

/**
 * The `ctx.telemetry` a tool gets for the run `handle` stands for; `carrier` gives the run's W3C
 * trace context when the backend has one (read only when asked: {@link traceCarrierOf}).
 */
export function toolTelemetry(
  handle: TelemetryHandle,
  carrier?: () => TraceCarrier | undefined,
): ToolTelemetry {
  const parent = Object.freeze({}) as ToolTelemetry;
  handles.set(parent, handle);
  if (carrier) carriers.set(parent, carrier);
  return parent;
}

/**
 * The W3C trace context (`{ traceparent, tracestate? }`, the two headers) of a tool call's run, from
 * its `ctx.telemetry`: send it with an outgoing call so that the work it starts in another process
 * is a child of this call's span. `undefined` without telemetry, or when the backend has no context.
 */
export function traceCarrierOf(telemetry: ToolTelemetry | undefined): TraceCarrier | undefined {
  if (telemetry === undefined) return undefined;
  return validCarrier(carriers.get(telemetry)?.());
}

/** A turn's parent as the telemetry takes it: a carrier, or the handle of a tool call's run. */
export type CheckedTraceParent = { carrier: TraceCarrier } | { handle: TelemetryHandle };

/**
 * A `traceParent` option checked: `undefined` when none was given; a {@link TraceParent} otherwise,
 * or an error naming `traceParent` (in `where`) and saying what was given, so that a mistyped trace
 * context is never taken for "no parent" and the turn silently starts a trace of its own.
 */
export function checkTraceParent(value: unknown, where: string): CheckedTraceParent | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null && handles.has(value as ToolTelemetry))
    return { handle: handles.get(value as ToolTelemetry) };
  const carrier = validCarrier(typeof value === 'string' ? { traceparent: value } : value);
  if (carrier) return { carrier };
  throw new TypeError(
    `${where}: traceParent is not a trace context: ${describe(value)}. Give the W3C traceparent ` +
      `header's text ("00-<32 hex trace id>-<16 hex span id>-<2 hex flags>"), ` +
      `{ traceparent, tracestate? }, or a tool call's ctx.telemetry`,
  );
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value === null) return 'null';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (traceparent === undefined) return 'an object without traceparent';
  if (typeof traceparent !== 'string') return `traceparent is a ${typeof traceparent}`;
  if (tracestate !== undefined && typeof tracestate !== 'string')
    return `tracestate is a ${typeof tracestate}`;
  return `traceparent ${describe(traceparent)}`;
}
