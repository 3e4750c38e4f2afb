import {
  type Attributes,
  type Context,
  context,
  type Meter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type {
  AgentTelemetry,
  ModelCallEndInfo,
  ModelCallStartInfo,
  TelemetryHandle,
  ToolStartInfo,
  TurnEndInfo,
  TurnStartInfo,
} from '../telemetry/agent-telemetry.js';
import {
  answerMessage,
  capturedJson,
  captureFromEnv,
  inputMessages,
  outputMessages,
  parsedArguments,
  statusMessage,
  userMessage,
} from './content-capture.js';
import { ATTR, PROVIDER, requestAttributes, serverAttributes, usageAttributes } from './genai-attributes.js';
import { genAiMetrics } from './genai-metrics.js';
import { carrierOfContext, contextOfCarrier } from './trace-carrier.js';

/** Options of {@link otelTelemetry}. */
export interface OtelTelemetryOptions {
  /** The tracer spans are made with (default: the global tracer provider's `agentloop` tracer). */
  tracer?: Tracer;
  /** A meter: `gen_ai.client.operation.duration` and `gen_ai.client.token.usage` are recorded with it. */
  meter?: Meter;
  /**
   * Record messages, tool arguments and results (redacted with the agent's redaction). Default:
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, else off.
   */
  captureContent?: boolean;
  /** Content attributes longer than this are cut, string by string, their JSON kept (default 16,384). */
  maxContentChars?: number;
}

/** What a turn's handle keeps: its span and context, and what its children repeat. */
interface TurnHandle {
  span: Span;
  ctx: Context;
  sessionId: string;
  model: string;
  server: Attributes;
  redact: <T>(value: T) => T;
}

/** Any handle this backend returns: every one has the context its children start in. */
interface Handle {
  span?: Span;
  ctx: Context;
  turn?: TurnHandle;
}

interface ChatHandle extends Handle {
  span: Span;
  startedAt: number;
  metricAttributes: Attributes;
}

const DEFAULT_MAX_CONTENT_CHARS = 16_384;

/**
 * Telemetry as OpenTelemetry GenAI spans, with `@opentelemetry/api` only (no SDK, no exporter, no
 * global registration: the application sets those up). One trace per turn: `invoke_agent <agent>`
 * with `chat <model>` per HTTP attempt, `execute_tool <tool>` per run (the tool runs in its context)
 * and `await_approval <tool>` per wait as its children; parents are always the handles the agent
 * passes, never the context that happens to be active. docs/telemetry.md lists every attribute.
 */
export function otelTelemetry(options: OtelTelemetryOptions = {}): AgentTelemetry {
  const tracer = options.tracer ?? trace.getTracer('agentloop');
  const capture = captureFromEnv(options.captureContent);
  const max = options.maxContentChars ?? DEFAULT_MAX_CONTENT_CHARS;
  const metrics = options.meter ? genAiMetrics(options.meter) : undefined;
  const content = (span: Span, name: string, value: unknown, redact: <T>(v: T) => T) => {
    if (capture) span.setAttribute(name, capturedJson(value, redact, max));
  };
  /** An ERROR status whose message says why (redacted and cut: a trace UI shows it as is). */
  const failed = (span: Span, message: string | undefined, redact: <T>(v: T) => T) =>
    span.setStatus({
      code: SpanStatusCode.ERROR,
      ...(message ? { message: statusMessage(message, redact, max) } : {}),
    });
  const start = (
    name: string,
    kind: SpanKind,
    parent: Context,
    attributes: Attributes,
    startTime?: number,
  ) => {
    const span = tracer.startSpan(name, { kind, attributes, ...(startTime ? { startTime } : {}) }, parent);
    return { span, ctx: trace.setSpan(parent, span) };
  };
  const parentOf = (handle: TelemetryHandle): Context => (handle as Handle | undefined)?.ctx ?? ROOT_CONTEXT;
  const turnOf = (handle: TelemetryHandle): TurnHandle | undefined =>
    (handle as Handle | undefined)?.turn ?? (isTurn(handle) ? handle : undefined);
  const noRedaction = <T>(value: T) => value;

  return {
    turnStart(info: TurnStartInfo): TelemetryHandle {
      // The caller's context at `send()` (outside any actor) when no parent is given: a turn started
      // inside a request the application traces is part of that trace.
      const parent = info.parent === undefined ? context.active() : parentOf(info.parent);
      const server = serverAttributes(info.baseUrl);
      const { span, ctx } = start(`invoke_agent ${info.agentName}`, SpanKind.INTERNAL, parent, {
        [ATTR.operation]: 'invoke_agent',
        [ATTR.provider]: PROVIDER,
        [ATTR.agentName]: info.agentName,
        [ATTR.requestModel]: info.model,
        [ATTR.conversation]: info.sessionId,
        [ATTR.turnKind]: info.kind,
        ...server,
      });
      if (info.input !== undefined) content(span, ATTR.inputMessages, userMessage(info.input), info.redact);
      const turn: TurnHandle = {
        span,
        ctx,
        sessionId: info.sessionId,
        model: info.model,
        server,
        redact: info.redact,
      };
      return turn;
    },

    turnEnd(handle: TelemetryHandle, info: TurnEndInfo): void {
      if (!isTurn(handle)) return;
      const { span } = handle;
      span.setAttributes({
        ...usageAttributes(info.usage),
        [ATTR.iterations]: info.iterations,
        [ATTR.approvalWaitMs]: info.approvalWaitMs,
      });
      if (info.suspended) span.setAttribute(ATTR.suspended, true);
      if (info.terminateReason !== undefined) span.setAttribute(ATTR.terminateReason, info.terminateReason);
      if (info.response !== undefined && info.terminateReason !== undefined)
        content(span, ATTR.outputMessages, answerMessage(info.response, info.terminateReason), handle.redact);
      if (info.terminateReason === 'error' || info.terminateReason === 'timeout') {
        span.setAttribute(ATTR.errorType, info.error?.code ?? info.terminateReason);
        failed(span, info.error?.message, handle.redact);
      }
      span.end();
    },

    modelCallStart(parent: TelemetryHandle, info: ModelCallStartInfo): TelemetryHandle {
      const turn = turnOf(parent);
      const server = serverAttributes(info.baseUrl);
      const base: Attributes = {
        [ATTR.operation]: 'chat',
        [ATTR.provider]: PROVIDER,
        [ATTR.requestModel]: info.model,
        ...server,
      };
      const { span, ctx } = start(`chat ${info.model}`, SpanKind.CLIENT, parentOf(parent), {
        ...base,
        ...(turn ? { [ATTR.conversation]: turn.sessionId } : {}),
        ...requestAttributes(info.request, info.stream),
        [ATTR.attempt]: info.attempt,
        [ATTR.wire]: info.wire,
      });
      if (capture) {
        const redact = turn?.redact ?? noRedaction;
        const { system, input } = inputMessages(info.messages);
        if (system.length > 0) content(span, ATTR.systemInstructions, system, redact);
        content(span, ATTR.inputMessages, input, redact);
      }
      const handle: ChatHandle = { span, ctx, startedAt: performance.now(), metricAttributes: base };
      if (turn) handle.turn = turn;
      return handle;
    },

    modelCallEnd(handle: TelemetryHandle, info: ModelCallEndInfo): void {
      const call = handle as ChatHandle | undefined;
      if (!call?.span) return;
      const { span } = call;
      const redact = call.turn?.redact ?? noRedaction;
      if (info.responseId !== undefined) span.setAttribute(ATTR.responseId, info.responseId);
      if (info.responseModel !== undefined) span.setAttribute(ATTR.responseModel, info.responseModel);
      if (info.finishReason !== undefined) span.setAttribute(ATTR.finishReasons, [info.finishReason]);
      if (info.usage) span.setAttributes(usageAttributes(info.usage));
      if (info.firstChunkMs !== undefined) span.setAttribute(ATTR.timeToFirstChunk, info.firstChunkMs / 1000);
      if (info.output)
        content(span, ATTR.outputMessages, outputMessages(info.output, info.finishReason), redact);
      if (info.errorType !== undefined) {
        span.setAttribute(ATTR.errorType, info.errorType);
        failed(span, info.errorMessage, redact);
      }
      metrics?.record(call, info);
      span.end();
    },

    toolStart(parent: TelemetryHandle, info: ToolStartInfo): TelemetryHandle {
      const turn = turnOf(parent);
      const attributes: Attributes = {
        [ATTR.operation]: 'execute_tool',
        [ATTR.toolName]: info.name,
        [ATTR.toolCallId]: info.toolCallId,
        [ATTR.toolType]: info.mcp ? 'extension' : 'function',
        [ATTR.startedEarly]: info.startedEarly,
        [ATTR.idempotencyKey]: info.idempotencyKey,
        [ATTR.fromLedger]: info.fromLedger === true,
      };
      if (turn) attributes[ATTR.conversation] = turn.sessionId;
      if (info.description !== undefined) attributes[ATTR.toolDescription] = info.description;
      if (info.mcp) {
        attributes[ATTR.mcpMethod] = 'tools/call';
        attributes[ATTR.mcpServer] = info.mcp.server;
      }
      const { span, ctx } = start(
        `execute_tool ${info.name}`,
        SpanKind.INTERNAL,
        parentOf(parent),
        attributes,
      );
      content(span, ATTR.toolArguments, parsedArguments(info.arguments), turn?.redact ?? noRedaction);
      const handle: Handle = { span, ctx };
      if (turn) handle.turn = turn;
      return handle;
    },

    toolRun<T>(handle: TelemetryHandle, execute: () => T): T {
      const ctx = (handle as Handle | undefined)?.ctx;
      return ctx ? context.with(ctx, execute) : execute();
    },

    toolEnd(handle: TelemetryHandle, info): void {
      const tool = handle as Handle | undefined;
      if (!tool?.span) return;
      content(tool.span, ATTR.toolResult, info.result, tool.turn?.redact ?? noRedaction);
      if (info.errorType !== undefined) {
        tool.span.setAttribute(ATTR.errorType, info.errorType);
        failed(tool.span, info.errorMessage, tool.turn?.redact ?? noRedaction);
      }
      tool.span.end();
    },

    approvalRequested(parent: TelemetryHandle, info): TelemetryHandle {
      // No `gen_ai.operation.name`: the conventions have no operation for a human's wait yet.
      const { span, ctx } = start(
        `await_approval ${info.name}`,
        SpanKind.INTERNAL,
        parentOf(parent),
        {
          [ATTR.toolName]: info.name,
          [ATTR.toolCallId]: info.toolCallId,
          [ATTR.conversation]: info.sessionId,
        },
        info.requestedAt,
      );
      return { span, ctx } satisfies Handle;
    },

    approvalResolved(handle: TelemetryHandle, info): void {
      const wait = handle as Handle | undefined;
      if (!wait?.span) return;
      wait.span.setAttribute(ATTR.decision, info.decision);
      if (info.answeredBy) wait.span.setAttribute(ATTR.answeredBy, info.answeredBy);
      if (info.always) wait.span.setAttribute(ATTR.always, true);
      wait.span.end();
    },

    carrierOf: (handle) => carrierOfContext((handle as Handle | undefined)?.ctx),
    fromCarrier: (carrier) => ({ ctx: contextOfCarrier(carrier) }) satisfies Handle,
    activeCarrier: () => carrierOfContext(context.active()),
  };
}

function isTurn(handle: TelemetryHandle): handle is TurnHandle {
  return typeof handle === 'object' && handle !== null && 'sessionId' in handle && 'redact' in handle;
}
