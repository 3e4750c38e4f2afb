import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionClient, MemorySessionStore, startWorker, type Worker } from '../src/index.js';
import { otelTelemetry } from '../src/otel/index.js';
import { serve } from './support/harness.js';
import { deploy, inMemoryTracing, ms, parentOf, spanNamed } from './support/otel-spans.js';

const tracing = inMemoryTracing();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  tracing.reset();
});

describe('agentloop/otel through a session client and workers', () => {
  it("a message carries the sender's trace; an approval answered later continues the same trace", async () => {
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, { content: 'deployed' }],
    });
    const store = new MemorySessionStore();
    const telemetry = otelTelemetry({ tracer: tracing.tracer() });
    const released: string[] = [];
    workers.push(
      startWorker({
        store,
        pollMs: 20,
        agent: () => ({ name: 'ops', baseURL: server.url, apiKey: 'k', tools: [deploy], telemetry }),
        onSession: (e) => {
          if (e.phase === 'released') released.push(e.state);
        },
      }),
    );
    const client = createSessionClient({ store, pollMs: 20, telemetry });

    // The sender's request span is active where it posts the message.
    const request = tracing.tracer().startSpan('POST /chat');
    await context.with(trace.setSpan(context.active(), request), () => client.send('s1', 'ship it'));
    request.end();
    const waiting = await client.waitFor('s1', { states: ['WaitingApproval'] });
    const callId = waiting.pendingApprovals[0]!.toolCallId;
    // The worker let the session go while it waits: its turn ended suspended.
    await expect.poll(() => released).toContain('WaitingApproval');
    await new Promise((r) => setTimeout(r, 30));
    expect(await client.approve('s1', callId)).toBe(true);
    await client.waitFor('s1', { states: ['Completed'] });
    await expect.poll(() => tracing.spans().filter((s) => s.name === 'invoke_agent ops').length).toBe(2);

    const spans = tracing.spans();
    const [first, continuation] = spans
      .filter((s) => s.name === 'invoke_agent ops')
      .sort((a, b) => ms(a.startTime) - ms(b.startTime));
    expect(parentOf(first!)).toBe(request.spanContext().spanId);
    expect(first!.attributes['agentloop.suspended']).toBe(true);
    expect(first!.attributes['agentloop.terminate_reason']).toBeUndefined();
    const wait = spanNamed(spans, 'await_approval deploy');
    expect(parentOf(wait)).toBe(first!.spanContext().spanId);
    expect(wait.attributes).toMatchObject({
      'agentloop.approval.decision': 'approved',
      'agentloop.approval.answered_by': 'inbox',
      'gen_ai.conversation.id': 's1',
    });
    // The wait spans the real wait: from the request (in the first carrier) to the answer.
    expect(ms(wait.startTime)).toBeLessThan(ms(first!.endTime));
    expect(ms(wait.endTime) - ms(wait.startTime)).toBeGreaterThanOrEqual(30);
    expect(parentOf(continuation!)).toBe(wait.spanContext().spanId);
    expect(continuation!.attributes).toMatchObject({
      'agentloop.turn.kind': 'continuation',
      'agentloop.terminate_reason': 'completed',
    });
    expect(parentOf(spanNamed(spans, 'execute_tool deploy'))).toBe(continuation!.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(
      new Set([request.spanContext().traceId]),
    );
  });
});
