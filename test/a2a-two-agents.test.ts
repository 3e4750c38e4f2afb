import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TaskState } from '@a2a-js/sdk';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createAgent, FileSessionStore } from '../src/index.js';
import { otelTelemetry } from '../src/otel/index.js';
import { a2aAgentTool } from '../src/server/a2a/index.js';
import { startScriptedServer } from '../src/testing/index.js';
import { sdkClient, tempDir } from './support/a2a-server.js';
import { repoRoot } from './support/build-dist.js';
import { scriptChildren } from './support/script-child.js';
import { waitUntil } from './support/wait-until.js';

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);

// Agent B: its own process, its own scripted model and file store; a charge tool that needs approval
// and a slow tool that only stops when its turn is interrupted.
const agentB = scriptChildren<'serve' | 'traced'>(
  'a2a-b-',
  `
import { z } from 'zod';
import { defineTool, FileSessionStore } from ${dist('index.js')};
import { startA2aServer } from ${dist('server/a2a/index.js')};
import { startScriptedServer } from ${dist('testing/index.js')};
const config = JSON.parse(process.argv[3]);
const model = await startScriptedServer({ scenario: config.scenario });
// 'traced': B has OpenTelemetry on, and prints each span as it ends.
let telemetry;
if (process.argv[2] === 'traced') {
  const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
  const { otelTelemetry } = await import(${dist('otel/index.js')});
  const printer = {
    onStart() {},
    onEnd(s) {
      const c = s.spanContext();
      console.log(JSON.stringify({ span: { name: s.name, traceId: c.traceId, spanId: c.spanId, parent: s.parentSpanContext?.spanId ?? '' } }));
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  telemetry = otelTelemetry({ tracer: new BasicTracerProvider({ spanProcessors: [printer] }).getTracer('b') });
}
const charged = [];
const charge = defineTool({
  name: 'charge', description: 'charges a card', parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: ({ amount }) => { charged.push(amount); console.log(JSON.stringify({ charged: amount })); return 'charged ' + amount; },
});
const slow = defineTool({
  name: 'slow', description: 'takes a while', parameters: z.object({}),
  execute: (_a, ctx) => new Promise((_, reject) => {
    console.log(JSON.stringify({ slowStarted: true }));
    ctx.signal.addEventListener('abort', () => { console.log(JSON.stringify({ slowAborted: true })); reject(new Error('aborted')); });
  }),
});
const server = await startA2aServer({
  agent: () => ({ name: 'billing', instructions: 'You are B.', loopControlTools: false, tools: [charge, slow], ...(telemetry ? { telemetry } : {}) }),
  store: new FileSessionStore({ dir: config.dir }),
  runtime: { baseURL: model.url, apiKey: 'test-key' },
  card: { name: 'billing', description: 'charges cards' },
});
console.log(JSON.stringify({ url: server.url }));
`,
);

describe('two agentloop processes: A calls B through a2aAgentTool', () => {
  it("B's approval surfaces as A's approval; approved by A's user, B runs the call and A gets the answer", async () => {
    const dirB = await tempDir();
    const b = agentB.run(
      'serve',
      {
        dir: dirB,
        scenario: {
          turns: [{ toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] }, { content: 'charged 5' }],
        },
      },
      (line) => typeof line.url === 'string',
    );
    const urlB = (await b.reached).at(-1)!.url as string;
    const progress: string[] = [];
    const traced: string[] = [];
    const askB = await a2aAgentTool({
      url: urlB,
      traceparent: ({ toolCallId }) => {
        traced.push(toolCallId);
        return '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      },
    });
    expect(askB.name).toBe('ask_billing');
    const modelA = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ name: 'ask_billing', arguments: { message: 'charge 5 to the card' } }] },
          { toolCalls: [{ name: 'ask_billing', arguments: { approve: true } }] },
          { content: 'B charged the card.' },
        ],
      },
    });
    const storeA = new FileSessionStore({ dir: await tempDir() });
    const agentA = createAgent({
      instructions: 'You are A.',
      loopControlTools: false,
      tools: [askB],
      baseURL: modelA.url,
      apiKey: 'test-key',
      store: storeA,
    });
    // B's answer streams into A's bus as the call's progress: the remote states and pieces of text.
    agentA.on('tool_progress', (e) => {
      const data = e.data as { state?: string; text?: string };
      progress.push(data.state ?? `text:${data.text}`);
    });
    try {
      const asked = new Promise<{ name: string; args: unknown }[]>((resolve) =>
        agentA.on('approval_requested', (e) => resolve(e.pending)),
      );
      const turn = agentA.send('please charge 5');
      const pending = await asked;
      expect(pending).toEqual([expect.objectContaining({ name: 'ask_billing', args: { approve: true } })]);
      expect(b.lines.some((l) => 'charged' in l)).toBe(false);
      // the first call's result told A's model what B waits for
      const told = agentA.messages.find((m) => m.role === 'tool');
      expect(String(told?.content)).toMatch(
        /billing waits for approval before it runs: charge \{"amount":5\}/,
      );
      agentA.approve(agentA.pendingApprovals[0]!.toolCallId);
      const result = await turn;
      expect(result.response).toBe('B charged the card.');
      // B's line comes through its stdout, which may be read after A's answer came over HTTP.
      await waitUntil(() => b.lines.some((l) => 'charged' in l), "B's charged line");
      expect(b.lines.filter((l) => 'charged' in l)).toEqual([{ charged: 5 }]);
      const lastTool = agentA.messages.filter((m) => m.role === 'tool').at(-1);
      expect(String(lastTool?.content)).toBe('charged 5');
      expect(progress).toContain('input-required');
      expect(progress.at(-1)).toBe('completed');
      expect(traced).toHaveLength(2);
    } finally {
      await agentA.close();
      await modelA.close();
    }
  });

  it("interrupting A's turn cancels B's task", async () => {
    const dirB = await tempDir();
    const b = agentB.run(
      'serve',
      { dir: dirB, scenario: { turns: [{ toolCalls: [{ name: 'slow', arguments: {} }] }] } },
      (line) => typeof line.url === 'string',
    );
    const urlB = (await b.reached).at(-1)!.url as string;
    let remoteTask = '';
    const askB = await a2aAgentTool({ url: urlB });
    const modelA = await startScriptedServer({
      scenario: {
        turns: [{ toolCalls: [{ name: 'ask_billing', arguments: { message: 'do the slow thing' } }] }],
      },
    });
    const agentA = createAgent({
      instructions: 'You are A.',
      loopControlTools: false,
      tools: [askB],
      baseURL: modelA.url,
      apiKey: 'test-key',
    });
    agentA.on('tool_progress', (e) => {
      remoteTask = (e.data as { taskId: string }).taskId;
    });
    try {
      const turn = agentA.send('go');
      await new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (b.lines.some((l) => 'slowStarted' in l) && remoteTask) {
            clearInterval(check);
            resolve();
          }
        }, 20);
      });
      agentA.interrupt('the user stopped it');
      const result = await turn;
      expect(result.terminateReason).toBe('interrupted');
      const client = await sdkClient(urlB, '1.0');
      let state = TaskState.TASK_STATE_UNSPECIFIED;
      for (let i = 0; i < 200 && state !== TaskState.TASK_STATE_CANCELED; i++) {
        state = (await client.getTask({ tenant: '', id: remoteTask })).status?.state ?? state;
        if (state !== TaskState.TASK_STATE_CANCELED) await new Promise((r) => setTimeout(r, 25));
      }
      expect(state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(b.lines.some((l) => 'slowAborted' in l)).toBe(true);
    } finally {
      await agentA.close();
      await modelA.close();
    }
  });

  it("the trace spans both processes: B's turn is a child of A's tool call, in A's trace", async () => {
    const b = agentB.run(
      'traced',
      { dir: await tempDir(), scenario: { turns: [{ content: 'charged 5' }] } },
      (line) => typeof line.url === 'string',
    );
    const urlB = (await b.reached).at(-1)!.url as string;
    // A: OpenTelemetry with no context manager: the trace context flows from the tool call's own span.
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const askB = await a2aAgentTool({ url: urlB });
    const modelA = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ name: 'ask_billing', arguments: { message: 'charge 5' } }] },
          { content: 'B charged the card.' },
        ],
      },
    });
    const agentA = createAgent({
      name: 'front',
      instructions: 'You are A.',
      loopControlTools: false,
      tools: [askB],
      baseURL: modelA.url,
      apiKey: 'test-key',
      telemetry: otelTelemetry({ tracer: provider.getTracer('a') }),
    });
    try {
      expect((await agentA.send('please charge 5')).response).toBe('B charged the card.');
      const spansA = exporter.getFinishedSpans();
      const call = spansA.find((s) => s.name === 'execute_tool ask_billing')!;
      expect(call).toBeDefined();
      const turnA = spansA.find((s) => s.name === 'invoke_agent front')!;
      expect(call.spanContext().traceId).toBe(turnA.spanContext().traceId);
      const spanLine = (l: Record<string, unknown>) =>
        (l.span as { name?: string } | undefined)?.name === 'invoke_agent billing';
      await waitUntil(() => b.lines.some(spanLine), "B's span lines"); // they arrive as its output
      const spansB = b.lines.flatMap((l) =>
        l.span ? [l.span as { traceId: string; parent: string; name: string }] : [],
      );
      const turnB = spansB.find((s) => s.name === 'invoke_agent billing')!;
      expect(turnB.parent).toBe(call.spanContext().spanId);
      expect(spansB.length).toBeGreaterThan(1);
      for (const span of spansB) expect(span.traceId).toBe(call.spanContext().traceId);
    } finally {
      await agentA.close();
      await modelA.close();
      await provider.shutdown();
    }
  });
});
