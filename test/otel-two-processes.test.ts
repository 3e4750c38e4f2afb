import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/build-dist.js';
import { serve } from './support/harness.js';
import { scriptChildren } from './support/script-child.js';

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);

/**
 * The child: an agent on a file store with `otelTelemetry` over the SDK's in-memory exporter. `ask`
 * starts a turn whose call needs approval and stops the agent while it waits (its process exits, as a
 * CLI would); `answer` restores the session in a new process and approves the call. Each prints its
 * finished spans as one JSON line.
 */
const CHILD = `
import { z } from 'zod';
import { context } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createAgent, defineTool, FileSessionStore } from ${dist('index.js')};
import { otelTelemetry } from ${dist('otel/index.js')};

const [mode, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
context.setGlobalContextManager(new AsyncHooksContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const agent = createAgent({
  name: 'ops',
  baseURL: config.baseURL,
  apiKey: 'test',
  store: new FileSessionStore({ dir: config.sessions }),
  session: 's1',
  telemetry: otelTelemetry({ tracer: provider.getTracer('child') }),
  tools: [defineTool({ name: 'deploy', description: 'deploys', parameters: z.object({ env: z.string() }), needsApproval: true, execute: ({ env }) => 'deployed to ' + env })],
});
await agent.ready();
if (mode === 'ask') {
  const asked = new Promise((resolve) => agent.on('approval_requested', resolve));
  agent.send('ship it');
  await asked;
} else {
  const done = new Promise((resolve) => agent.on('turn_end', resolve));
  agent.approve(agent.pendingApprovals[0].toolCallId);
  await done;
}
await agent.close();
const spans = exporter.getFinishedSpans().map((s) => ({
  name: s.name,
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parent: s.parentSpanContext?.spanId ?? '',
  start: s.startTime[0] * 1000 + s.startTime[1] / 1e6,
  end: s.endTime[0] * 1000 + s.endTime[1] / 1e6,
  attributes: s.attributes,
}));
process.stdout.write(JSON.stringify({ spans, state: agent.state }) + '\\n');
`;

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parent: string;
  start: number;
  end: number;
  attributes: Record<string, unknown>;
}

const children = scriptChildren<'ask' | 'answer'>('otel-two-', CHILD);

describe('agentloop/otel across processes', () => {
  it('an approval answered by a second process continues the first trace', async () => {
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, { content: 'deployed' }],
    });
    const config = { baseURL: server.url, sessions: path.join(children.work(), 'sessions') };
    const spansOf = async (mode: 'ask' | 'answer') => {
      const child = children.run(mode, config, (line) => Array.isArray(line.spans));
      const lines = await child.reached;
      await child.exited;
      return lines.at(-1)!.spans as SpanLine[];
    };
    const first = await spansOf('ask');
    await new Promise((r) => setTimeout(r, 50)); // the wait, while no process runs the session
    const second = await spansOf('answer');

    const suspended = first.find((s) => s.name === 'invoke_agent ops')!;
    expect(suspended.attributes).toMatchObject({
      'agentloop.suspended': true,
      'gen_ai.conversation.id': 's1',
    });
    expect(suspended.attributes['agentloop.terminate_reason']).toBeUndefined();
    expect(first.map((s) => s.name).sort()).toEqual(['chat gpt-4o-mini', 'invoke_agent ops']);

    const wait = second.find((s) => s.name === 'await_approval deploy')!;
    const continuation = second.find((s) => s.name === 'invoke_agent ops')!;
    expect(wait.parent).toBe(suspended.spanId);
    expect(wait.attributes).toMatchObject({
      'agentloop.approval.decision': 'approved',
      'gen_ai.tool.name': 'deploy',
    });
    // From the request in the first process to the answer in the second. The request's time is kept
    // in whole milliseconds (Date.now()) while a span ends on the high-resolution clock, so the two
    // are compared at the millisecond (CI saw the request 0.8 ms "after" the span's end once).
    expect(wait.start).toBeLessThanOrEqual(Math.ceil(suspended.end));
    expect(wait.end - wait.start).toBeGreaterThanOrEqual(50);
    expect(continuation.parent).toBe(wait.spanId);
    expect(continuation.attributes).toMatchObject({
      'agentloop.turn.kind': 'continuation',
      'agentloop.terminate_reason': 'completed',
    });
    const tool = second.find((s) => s.name === 'execute_tool deploy')!;
    expect(tool.parent).toBe(continuation.spanId);
    expect(new Set([...first, ...second].map((s) => s.traceId)).size).toBe(1);
  }, 120_000);
});
