import type { AgentTelemetry } from '../../telemetry/agent-telemetry.js';
import type { CommandIo } from '../command-io.js';
import { parentedOn, traceCarrierFromEnv } from './trace-env.js';

/** The `parseArgs` option of `--otel`, shared by `run`, `chat`, `demo` and `worker`. */
export const OTEL_FLAG = { otel: { type: 'boolean', default: false } } as const;

export const OTEL_USAGE = `  --otel              export traces (OpenTelemetry GenAI spans) over OTLP/HTTP to
                      OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), service "agentloop";
                      turns join the trace TRACEPARENT / TRACESTATE name, when set
`;

/** The packages `--otel` loads, as the install line names them. */
const INSTALL =
  'npm install @opentelemetry/api @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources @opentelemetry/context-async-hooks';

/** What `--otel` set up: the agents' telemetry (none without the flag or the SDK) and its flush. */
export interface CliOtel {
  readonly telemetry: AgentTelemetry | undefined;
  /** An agent closed before the flush when a signal ends the process (its open turn ends interrupted). */
  track(agent: { close(): Promise<void> }): void;
  /** Closes the agents tracked, exports what is left and shuts the exporter down. */
  close(): Promise<void>;
}

const OFF: CliOtel = { telemetry: undefined, track: () => {}, close: async () => {} };

/**
 * With `--otel`: the OpenTelemetry SDK (loaded here, when installed: agentloop does not depend on it)
 * set up as an application would, exporting spans in batches over OTLP/HTTP (the exporter reads
 * `OTEL_EXPORTER_OTLP_ENDPOINT` and the other standard variables), with an async-hooks context
 * manager so that a tool's own instrumented calls land under its span. With `TRACEPARENT` set (and
 * `TRACESTATE`), turns without a parent of their own join the caller's trace. Ctrl-C or SIGTERM flushes
 * before the process ends when the command itself does not handle the signal. Without the SDK, one
 * line names the install command and the command runs without telemetry.
 */
export async function startCliOtel(enabled: boolean | undefined, io: CommandIo): Promise<CliOtel> {
  if (!enabled) return OFF;
  let sdk: Awaited<ReturnType<typeof loadSdk>>;
  try {
    sdk = await loadSdk();
  } catch {
    io.stderr(`--otel: the OpenTelemetry SDK is not installed; traces are off. Install it: ${INSTALL}\n`);
    return OFF;
  }
  const { api, base, exporter, resources, hooks, otel } = sdk;
  const provider = new base.BasicTracerProvider({
    resource: resources.resourceFromAttributes({
      'service.name': process.env.OTEL_SERVICE_NAME || 'agentloop',
    }),
    spanProcessors: [new base.BatchSpanProcessor(new exporter.OTLPTraceExporter())],
  });
  const manager = new hooks.AsyncHooksContextManager().enable();
  api.context.setGlobalContextManager(manager);
  let closing: Promise<void> | undefined;
  const agents = new Set<{ close(): Promise<void> }>();
  const close = () => {
    closing ??= (async () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await Promise.all([...agents].map((agent) => agent.close().catch(() => {})));
      await provider.forceFlush().catch(() => {});
      await provider.shutdown().catch(() => {});
      api.context.disable();
    })();
    return closing;
  };
  // Node's default for a signal is to exit at once, losing the spans in the batch: when nothing else
  // listens (the command leaves the signal to Node), flush first, then exit as the signal would.
  function onSignal(signal: NodeJS.Signals) {
    if (process.listenerCount(signal) > 1) return;
    void close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || 'http://localhost:4318';
  io.stderr(`--otel: traces go to ${endpoint} (OTLP/HTTP), service agentloop\n`);
  const telemetry = otel.otelTelemetry({ tracer: provider.getTracer('agentloop') });
  const caller = traceCarrierFromEnv();
  if (caller && 'error' in caller) io.stderr(`--otel: ${caller.error}; turns start traces of their own\n`);
  return {
    telemetry: caller && 'carrier' in caller ? parentedOn(telemetry, caller.carrier) : telemetry,
    track: (agent) => agents.add(agent),
    close,
  };
}

/** The SDK packages and agentloop/otel (which needs `@opentelemetry/api`), loaded only for `--otel`. */
async function loadSdk() {
  const [api, base, exporter, resources, hooks, otel] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    import('../../otel/index.js'),
  ]);
  return { api, base, exporter, resources, hooks, otel };
}
