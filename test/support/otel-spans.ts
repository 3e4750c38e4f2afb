import { context, type Tracer } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.js';

/** A tool that needs approval: the call a turn waits on. */
export const deploy = defineTool({
  name: 'deploy',
  description: 'deploys',
  parameters: z.object({ env: z.string() }),
  needsApproval: true,
  execute: ({ env }) => `deployed to ${env}`,
});

/**
 * The OpenTelemetry SDK as an application sets it up, for tests: an async-hooks context manager (so
 * a context set around a tool's `execute` follows its awaits) and a tracer whose finished spans are
 * kept in memory. The provider is not registered globally: spans come from the tracer given.
 */
export function inMemoryTracing(): { tracer: () => Tracer; spans: () => ReadableSpan[]; reset: () => void } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncHooksContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
  });
  afterAll(async () => {
    context.disable();
    await provider.shutdown();
  });
  return {
    tracer: () => provider.getTracer('test'),
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
  };
}

/** The span's parent span id ('' for a root). */
export function parentOf(span: ReadableSpan): string {
  return span.parentSpanContext?.spanId ?? '';
}

/** The one finished span named `name`; throws naming the spans there are when there is not exactly one. */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1)
    throw new Error(
      `expected one span "${name}", found ${found.length} in: ${spans.map((s) => s.name).join(', ')}`,
    );
  return found[0]!;
}

/** Epoch ms of an hrtime. */
export function ms(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}
