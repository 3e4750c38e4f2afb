import { SpanStatusCode } from '@opentelemetry/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { otelTelemetry } from '../src/otel/index.js';
import { agentOn } from './support/harness.js';
import { inMemoryTracing, parentOf, spanNamed } from './support/otel-spans.js';

// What a trace consumer (an evaluation tool's OTLP receiver) needs: a caller's W3C context joined,
// an error span that says why, and the conventions' finish reasons. Real OpenTelemetry SDK.

const tracing = inMemoryTracing();
beforeEach(() => tracing.reset());

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('agent.send(text, { traceParent })', () => {
  it("a W3C traceparent string parents the turn: invoke_agent joins the caller's trace", async () => {
    const { agent } = await agentOn(
      { turns: [{ content: 'hi' }] },
      { name: 'ops', telemetry: otelTelemetry({ tracer: tracing.tracer() }) },
    );
    await agent.send('hello', { traceParent: `00-${TRACE_ID}-${SPAN_ID}-01` });
    const root = spanNamed(tracing.spans(), 'invoke_agent ops');
    expect(root.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(root)).toBe(SPAN_ID);
    for (const span of tracing.spans()) expect(span.spanContext().traceId).toBe(TRACE_ID);
  });

  it('{ traceparent, tracestate } parents the turn and keeps the vendor state', async () => {
    const { agent } = await agentOn(
      { turns: [{ content: 'hi' }] },
      { name: 'ops', telemetry: otelTelemetry({ tracer: tracing.tracer() }) },
    );
    await agent.send('hello', {
      traceParent: { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'vendor=abc' },
    });
    const root = spanNamed(tracing.spans(), 'invoke_agent ops');
    expect(root.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(root)).toBe(SPAN_ID);
    expect(root.spanContext().traceState?.serialize()).toBe('vendor=abc');
  });

  it('anything else given is refused naming traceParent, with telemetry or without, and nothing is sent', async () => {
    const bad: unknown[] = [
      'not a trace',
      `00-${'0'.repeat(32)}-${SPAN_ID}-01`,
      `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`,
      `ff-${TRACE_ID}-${SPAN_ID}-01`,
      { traceParent: `00-${TRACE_ID}-${SPAN_ID}-01` },
      { traceparent: 42 },
      { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 7 },
      42,
      null,
    ];
    for (const telemetry of [otelTelemetry({ tracer: tracing.tracer() }), undefined]) {
      const { agent, server } = await agentOn({ turns: [{ content: 'hi' }] }, telemetry ? { telemetry } : {});
      for (const traceParent of bad)
        await expect(agent.send('hello', { traceParent: traceParent as string })).rejects.toThrow(
          /agent\.send: traceParent is not a trace context/,
        );
      expect(server.requests).toHaveLength(0);
      expect((await agent.send('hello')).response).toBe('hi');
    }
    expect(tracing.spans().filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(1);
  });

  it('is typed: a number does not compile', async () => {
    const { agent } = await agentOn({ turns: [{ content: 'hi' }] });
    // @ts-expect-error a traceParent is a string, a carrier or a tool call's ctx.telemetry
    await expect(agent.send('hello', { traceParent: 1 })).rejects.toThrow(/traceParent/);
  });
});

describe('ERROR spans say why', () => {
  it("a failing tool's execute_tool span has the error as its status message, redacted and cut", async () => {
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    const broken = defineTool({
      name: 'broken',
      description: 'fails',
      parameters: z.object({}),
      execute: () => {
        throw new Error(`database refused ${secret}: ${'x'.repeat(500)}`);
      },
    });
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'broken', arguments: {} }] }, { content: 'sorry' }] },
      {
        name: 'ops',
        tools: [broken],
        secrets: [secret],
        telemetry: otelTelemetry({ tracer: tracing.tracer(), maxContentChars: 100 }),
      },
    );
    await agent.send('go');
    const tool = spanNamed(tracing.spans(), 'execute_tool broken');
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool.attributes['error.type']).toBe('tool_error');
    expect(tool.status.message).toMatch(/^database refused \[REDACTED\]: x+…\[\d+ chars cut\]$/);
    expect(tool.status.message!.length).toBeLessThan(140);
  });

  it("a failed model call's span and the turn's span carry the error's message, redacted and cut", async () => {
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    const { agent } = await agentOn(
      { turns: [{ error: { status: 400, message: `bad request ${secret} ${'y'.repeat(500)}` } }] },
      {
        name: 'ops',
        model: 'm',
        secrets: [secret],
        telemetry: otelTelemetry({ tracer: tracing.tracer(), maxContentChars: 100 }),
      },
    );
    expect((await agent.send('hello')).terminateReason).toBe('error');
    for (const name of ['chat m', 'invoke_agent ops']) {
      const span = spanNamed(tracing.spans(), name);
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.status.message).toMatch(/bad request \[REDACTED\] y+…\[\d+ chars cut\]$/);
      expect(span.status.message).not.toContain(secret);
    }
  });
});

describe('gen_ai.output.messages finish_reason', () => {
  const telemetry = () => otelTelemetry({ tracer: tracing.tracer(), captureContent: true });
  const outputOf = (name: string) =>
    JSON.parse(String(spanNamed(tracing.spans(), name).attributes['gen_ai.output.messages']));
  const echo = defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({}),
    execute: () => 'echo',
  });

  it("a completed turn is 'stop', its terminate reason in agentloop.terminate_reason; a call is 'tool_call'", async () => {
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'echo', arguments: {} }] }, { content: 'done' }] },
      { name: 'ops', model: 'm', tools: [echo], telemetry: telemetry() },
    );
    await agent.send('hello');
    expect(outputOf('invoke_agent ops')[0].finish_reason).toBe('stop');
    expect(spanNamed(tracing.spans(), 'invoke_agent ops').attributes['agentloop.terminate_reason']).toBe(
      'completed',
    );
    const chats = tracing.spans().filter((s) => s.name === 'chat m');
    const reasons = chats.map(
      (c) => JSON.parse(String(c.attributes['gen_ai.output.messages']))[0].finish_reason,
    );
    expect(reasons).toEqual(['tool_call', 'stop']);
  });

  it("a turn stopped at its iteration limit is 'length'; a turn in error is 'error'", async () => {
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'echo', arguments: {} }] }, { content: 'done' }] },
      { name: 'ops', tools: [echo], telemetry: telemetry(), limits: { maxIterations: 1 } },
    );
    expect((await agent.send('hello')).terminateReason).toBe('max_iterations');
    expect(outputOf('invoke_agent ops')[0].finish_reason).toBe('length');
    tracing.reset();
    const failing = await agentOn(
      { turns: [{ error: { status: 400, message: 'bad' } }] },
      { name: 'ops', telemetry: telemetry() },
    );
    expect((await failing.agent.send('hello')).terminateReason).toBe('error');
    expect(outputOf('invoke_agent ops')[0].finish_reason).toBe('error');
  });
});
