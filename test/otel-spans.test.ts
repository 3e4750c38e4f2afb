import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool, subagentTool } from '../src/index.js';
import { otelTelemetry } from '../src/otel/index.js';
import { agentAt, agentOn, nextEvent, serve } from './support/harness.js';
import { deploy, inMemoryTracing, ms, parentOf, spanNamed } from './support/otel-spans.js';

const tracing = inMemoryTracing();
beforeEach(() => tracing.reset());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A promise and the function that resolves it. */
function opening(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Opens when the test says so: the auto-approved call runs until the approval was answered. */
let gate = opening();
let fetching = opening();

/** A tool that makes a span of its own (as an instrumented HTTP client would) after an await. */
const fetchPage = defineTool({
  name: 'fetch_page',
  description: 'fetches a page',
  parameters: z.object({ url: z.string() }),
  execute: async ({ url }) => {
    await sleep(5);
    const span = tracing.tracer().startSpan('GET page');
    fetching.resolve();
    await gate.promise;
    await sleep(5);
    span.end();
    return `page at ${url}`;
  },
});

const twoCalls = {
  turns: [
    {
      toolCalls: [
        { name: 'fetch_page', arguments: { url: 'https://example.test/' } },
        { name: 'deploy', arguments: { env: 'prod' } },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 40 },
    },
    { content: 'deployed', usage: { prompt_tokens: 150, completion_tokens: 5 } },
  ],
};

function attrs(span: ReadableSpan) {
  return span.attributes;
}

describe('agentloop/otel: GenAI spans', () => {
  it('a turn with two parallel calls and one approval: names, kinds, parents, attributes', async () => {
    const telemetry = otelTelemetry({ tracer: tracing.tracer() });
    const { agent, server } = await agentOn(twoCalls, {
      name: 'ops',
      model: 'test-model',
      tools: [fetchPage, deploy],
      telemetry,
    });
    gate = opening();
    fetching = opening();
    const requested = nextEvent(agent, 'approval_requested');
    const turn = agent.send('ship it');
    await requested;
    await fetching.promise; // fetch_page runs meanwhile
    await sleep(50);
    agent.approve('call_0_1');
    gate.resolve();
    expect((await turn).response).toBe('deployed');

    const spans = tracing.spans();
    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        'invoke_agent ops',
        'chat test-model',
        'chat test-model',
        'execute_tool fetch_page',
        'GET page',
        'await_approval deploy',
        'execute_tool deploy',
      ].sort(),
    );
    const root = spanNamed(spans, 'invoke_agent ops');
    const rootId = root.spanContext().spanId;
    expect(parentOf(root)).toBe('');
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const host = new URL(server.url);
    expect(attrs(root)).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.name': 'ops',
      'gen_ai.request.model': 'test-model',
      'gen_ai.conversation.id': agent.sessionId,
      'server.address': host.hostname,
      'server.port': Number(host.port),
      'gen_ai.usage.input_tokens': 250,
      'gen_ai.usage.output_tokens': 25,
      'gen_ai.usage.cache_read.input_tokens': 40,
      'agentloop.terminate_reason': 'completed',
      'agentloop.iterations': 2,
    });
    expect(attrs(root)['agentloop.approval.wait_ms']).toBeGreaterThanOrEqual(50);
    expect(root.status.code).toBe(SpanStatusCode.UNSET);

    const chats = spans.filter((s) => s.name === 'chat test-model');
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(chat)).toBe(rootId);
      expect(attrs(chat)).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'test-model',
        'gen_ai.response.model': 'test-model',
        'gen_ai.conversation.id': agent.sessionId,
        'server.address': host.hostname,
        'agentloop.attempt': 1,
      });
      expect(attrs(chat)['gen_ai.response.id']).toEqual(expect.any(String));
      expect(attrs(chat)['gen_ai.response.time_to_first_chunk']).toEqual(expect.any(Number));
    }
    const first = chats.find((c) => attrs(c)['gen_ai.usage.input_tokens'] === 100)!;
    expect(attrs(first)).toMatchObject({
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 40,
    });

    const fetch = spanNamed(spans, 'execute_tool fetch_page');
    const approved = spanNamed(spans, 'execute_tool deploy');
    const wait = spanNamed(spans, 'await_approval deploy');
    for (const span of [fetch, approved, wait]) {
      expect(span.kind).toBe(SpanKind.INTERNAL);
      expect(parentOf(span)).toBe(rootId);
      expect(attrs(span)['gen_ai.conversation.id']).toBe(agent.sessionId);
    }
    expect(attrs(fetch)).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'fetch_page',
      'gen_ai.tool.call.id': 'call_0_0',
      'gen_ai.tool.type': 'function',
      'agentloop.tool.idempotency_key': `${agent.sessionId}:call_0_0`,
      'agentloop.tool.from_ledger': false,
    });
    expect(attrs(wait)).toMatchObject({
      'gen_ai.tool.name': 'deploy',
      'gen_ai.tool.call.id': 'call_0_1',
      'agentloop.approval.decision': 'approved',
      'agentloop.approval.answered_by': 'local',
    });
    expect(attrs(wait)['gen_ai.operation.name']).toBeUndefined();
    // The tool's own span is a child of its execute_tool span (the tool ran in its context).
    expect(parentOf(spanNamed(spans, 'GET page'))).toBe(fetch.spanContext().spanId);
    // The auto-approved call ran while the approval was awaited; the approved one ran after.
    expect(ms(fetch.startTime)).toBeLessThan(ms(wait.endTime));
    expect(ms(fetch.endTime)).toBeGreaterThan(ms(wait.endTime));
    expect(ms(approved.startTime)).toBeGreaterThanOrEqual(ms(wait.endTime));
    // No content by default.
    for (const span of spans)
      expect(
        Object.keys(attrs(span)).filter((k) => /messages|instructions|arguments|result/.test(k)),
      ).toEqual([]);
  });

  it('a retried call gives two chat spans: the failed attempt with error.type', async () => {
    const { agent } = await agentOn(
      { turns: [{ content: 'hi', error: { status: 429 }, times: 1 }] },
      {
        model: 'm',
        telemetry: otelTelemetry({ tracer: tracing.tracer() }),
        retry: { baseDelayMs: 1, jitter: 'none' },
      },
    );
    await agent.send('hello');
    const chats = tracing.spans().filter((s) => s.name === 'chat m');
    expect(
      chats.map((c) => [attrs(c)['agentloop.attempt'], attrs(c)['error.type'] ?? null, c.status.code]),
    ).toEqual([
      [1, '429', SpanStatusCode.ERROR],
      [2, null, SpanStatusCode.UNSET],
    ]);
  });

  it('a turn that ends in error is an ERROR span with error.type', async () => {
    const { agent } = await agentOn(
      { turns: [{ error: { status: 400, message: 'bad request' } }] },
      { name: 'ops', model: 'm', telemetry: otelTelemetry({ tracer: tracing.tracer() }) },
    );
    expect((await agent.send('hello')).terminateReason).toBe('error');
    const root = spanNamed(tracing.spans(), 'invoke_agent ops');
    expect(root.status.code).toBe(SpanStatusCode.ERROR);
    expect(attrs(root)['error.type']).toEqual(expect.any(String));
    expect(attrs(spanNamed(tracing.spans(), 'chat m'))['error.type']).toBe('400');
  });

  it('a rejected call has no execute_tool span; a limit is not an error', async () => {
    const { agent } = await agentOn(
      { turns: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, { content: 'ok' }] },
      {
        name: 'ops',
        tools: [deploy],
        telemetry: otelTelemetry({ tracer: tracing.tracer() }),
        limits: { maxIterations: 1 },
      },
    );
    const requested = nextEvent(agent, 'approval_requested');
    const turn = agent.send('ship');
    await requested;
    agent.reject('call_0_0', 'no');
    const result = await turn;
    const spans = tracing.spans();
    expect(spans.some((s) => s.name === 'execute_tool deploy')).toBe(false);
    expect(attrs(spanNamed(spans, 'await_approval deploy'))['agentloop.approval.decision']).toBe('rejected');
    const root = spanNamed(spans, 'invoke_agent ops');
    expect(attrs(root)['agentloop.terminate_reason']).toBe(result.terminateReason);
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('an MCP tool carries the MCP client attributes; an interrupt ends an unanswered wait', async () => {
    const listed = defineTool({
      name: 'files__read',
      description: 'reads',
      parameters: z.object({}),
      mcp: { server: 'files', tool: 'read' },
      execute: () => 'text',
    });
    const { agent } = await agentOn(
      {
        turns: [
          {
            toolCalls: [
              { name: 'files__read', arguments: {} },
              { name: 'deploy', arguments: { env: 'prod' } },
            ],
          },
          { content: 'ok' },
        ],
      },
      { name: 'ops', tools: [listed, deploy], telemetry: otelTelemetry({ tracer: tracing.tracer() }) },
    );
    const requested = nextEvent(agent, 'approval_requested');
    const turn = agent.send('read');
    await requested;
    agent.interrupt('enough');
    expect((await turn).terminateReason).toBe('interrupted');
    const spans = tracing.spans();
    expect(attrs(spanNamed(spans, 'execute_tool files__read'))).toMatchObject({
      'gen_ai.tool.type': 'extension',
      'mcp.method.name': 'tools/call',
      'agentloop.mcp.server': 'files',
    });
    expect(attrs(spanNamed(spans, 'await_approval deploy'))['agentloop.approval.decision']).toBe(
      'unanswered',
    );
    const root = spanNamed(spans, 'invoke_agent ops');
    expect(attrs(root)['agentloop.terminate_reason']).toBe('interrupted');
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a subagent's invoke_agent is a child of the parent's execute_tool", async () => {
    const helper = defineAgent({ name: 'helper', description: 'helps', instructions: 'help' });
    const telemetry = otelTelemetry({ tracer: tracing.tracer() });
    // One server for both: the child's first request (no assistant message yet) gets turn 0 too and
    // calls a tool it does not have; its second gets the answer.
    const server = await serve({
      turns: [{ toolCalls: [{ name: 'helper', arguments: { task: 'look' } }] }, { content: 'done' }],
    });
    const runtime = { baseURL: server.url, apiKey: 'k', telemetry, loopControlTools: false };
    const agent = agentAt(server, { name: 'lead', telemetry, tools: [subagentTool(helper, { runtime })] });
    await agent.send('delegate');
    const spans = tracing.spans();
    const lead = spanNamed(spans, 'invoke_agent lead').spanContext().spanId;
    const tool = spans.find((s) => s.name === 'execute_tool helper' && parentOf(s) === lead)!;
    const child = spanNamed(spans, 'invoke_agent helper');
    expect(parentOf(child)).toBe(tool.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(tool.spanContext().traceId);
  });

  it('with a meter: gen_ai.client.operation.duration and gen_ai.client.token.usage', async () => {
    class Reader extends MetricReader {
      protected override async onShutdown() {}
      protected override async onForceFlush() {}
    }
    const reader = new Reader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
    const { agent } = await agentOn(
      { turns: [{ content: 'hi', usage: { prompt_tokens: 12, completion_tokens: 3 } }] },
      { model: 'm', telemetry: otelTelemetry({ tracer: tracing.tracer(), meter }) },
    );
    await agent.send('hello');
    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const named = (name: string) => metrics.find((m) => m.descriptor.name === name)!;
    const duration = named('gen_ai.client.operation.duration');
    expect(duration.descriptor.unit).toBe('s');
    expect(duration.dataPoints[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'm',
    });
    const tokens = named('gen_ai.client.token.usage').dataPoints.map((p) => [
      p.attributes['gen_ai.token.type'],
      (p.value as { sum: number }).sum,
    ]);
    expect(tokens).toEqual(
      expect.arrayContaining([
        ['input', 12],
        ['output', 3],
      ]),
    );
  });

  it('content capture records the conventions JSON through the redaction, cut to size', async () => {
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    const echo = defineTool({
      name: 'echo',
      description: 'echoes',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => `echo ${text} ${'x'.repeat(5000)}`,
    });
    const { agent } = await agentOn(
      {
        turns: [{ toolCalls: [{ name: 'echo', arguments: { text: secret } }] }, { content: `key ${secret}` }],
      },
      {
        name: 'ops',
        instructions: 'be brief',
        tools: [echo],
        secrets: [secret],
        telemetry: otelTelemetry({ tracer: tracing.tracer(), captureContent: true, maxContentChars: 2000 }),
      },
    );
    await agent.send(`use ${secret}`);
    const spans = tracing.spans();
    for (const span of spans)
      for (const value of Object.values(attrs(span))) expect(String(value)).not.toContain(secret);
    const tool = spanNamed(spans, 'execute_tool echo');
    expect(JSON.parse(String(attrs(tool)['gen_ai.tool.call.arguments']))).toEqual({ text: '[REDACTED]' });
    const result = String(attrs(tool)['gen_ai.tool.call.result']);
    expect(result.length).toBeLessThanOrEqual(2000);
    expect(JSON.parse(result)).toMatch(/^echo \[REDACTED\] x+…\[\d+ chars cut\]$/);
    const lastChat = spans.filter((s) => s.name.startsWith('chat ')).at(-1)!;
    const input = JSON.parse(String(attrs(lastChat)['gen_ai.input.messages']));
    expect(input.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(input[1].parts[0]).toMatchObject({
      type: 'tool_call',
      name: 'echo',
      arguments: { text: '[REDACTED]' },
    });
    expect(JSON.parse(String(attrs(lastChat)['gen_ai.system_instructions']))[0].content).toMatch(/be brief/);
    expect(JSON.parse(String(attrs(lastChat)['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'key [REDACTED]' }], finish_reason: 'stop' },
    ]);
  });
});
