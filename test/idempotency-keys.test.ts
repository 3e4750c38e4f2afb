import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/agent/agent.js';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import { startScriptedServer } from '../src/testing/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { CrashableStore } from './support/crashable-store.js';
import { assertToolCallsAnswered, deferred } from './support/harness.js';

describe('idempotency keys and outcome unknown', () => {
  it('after a crash mid-batch: the idempotent tool runs again with the same key, the other is answered "outcome unknown"', async () => {
    const server = await startScriptedServer({
      scenario: {
        turns: [
          {
            toolCalls: [
              { name: 'lookup_order', arguments: { order: 'A1' } },
              { name: 'refund', arguments: { order: 'A1' } },
            ],
          },
          { content: 'Checked the order; the refund may have gone out, I will check.' },
        ],
      },
    });
    const keys: Record<string, string[]> = { lookup_order: [], refund: [] };
    const hang = deferred();
    const tools = (gate?: Promise<void>) => [
      defineTool({
        name: 'lookup_order',
        description: 'reads an order',
        parameters: z.object({ order: z.string() }),
        idempotent: true,
        execute: async ({ order }, ctx) => {
          keys.lookup_order!.push(ctx.idempotencyKey);
          if (gate) await gate;
          return `order ${order}: paid`;
        },
      }),
      defineTool({
        name: 'refund',
        description: 'refunds an order',
        parameters: z.object({ order: z.string() }),
        execute: async (_args, ctx) => {
          keys.refund!.push(ctx.idempotencyKey);
          if (gate) await gate;
          return 'refunded';
        },
      }),
    ];
    const inner = new MemorySessionStore();
    const store = new CrashableStore(inner);
    const first = createAgent({
      baseURL: server.url,
      apiKey: 'k',
      store,
      session: 'idem-1',
      tools: tools(hang.promise),
    });
    void first.send('refund order A1');
    // Both tools are running (their starts are durable: the key is given after the start is written).
    while (keys.refund!.length === 0 || keys.lookup_order!.length === 0)
      await new Promise((r) => setTimeout(r, 5));
    await first.flush();
    store.crash();
    first.stop();

    const second = createAgent({
      baseURL: server.url,
      apiKey: 'k',
      store: inner,
      session: 'idem-1',
      tools: tools(),
    });
    await second.ready();
    expect(second.state).toBe('Interrupted');
    expect(second.restoreReport?.calls).toEqual([
      { toolCallId: expect.any(String), name: 'lookup_order', outcome: 'rerun' },
      { toolCallId: expect.any(String), name: 'refund', outcome: 'interrupted' },
    ]);
    // Same key on both runs of the lookup; the refund ran once.
    expect(keys.lookup_order).toHaveLength(2);
    expect(keys.lookup_order![1]).toBe(keys.lookup_order![0]);
    expect(keys.lookup_order![0]).toMatch(/^idem-1:/);
    expect(keys.refund).toHaveLength(1);
    expect(keys.refund![0]).not.toBe(keys.lookup_order![0]);
    const tools2 = second.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(tools2).toEqual(['order A1: paid', expect.stringMatching(/^Outcome unknown: tool call "refund"/)]);
    assertToolCallsAnswered(second.messages);
    // The key is in the transcript's start line, for audits.
    const { entries } = await inner.readTranscript('idem-1');
    const starts = entries.filter((e) => e.kind === 'tool_call_started');
    expect(starts.map((e) => e.kind === 'tool_call_started' && e.idempotencyKey)).toEqual([
      keys.lookup_order![0],
      keys.refund![0],
    ]);
    const result = await second.resume();
    expect(result.response).toMatch(/may have gone out/);
    second.stop();
    await server.close();
  });

  it('a crash after the final answer was written but before the save: restored as Completed, the model is not asked again', async () => {
    const server = await startScriptedServer({ scenario: { turns: [{ content: 'The answer is 42.' }] } });
    const inner = new MemorySessionStore();
    const store = new CrashableStore(inner);
    const first = createAgent({ baseURL: server.url, apiKey: 'k', store, session: 'final-1' });
    await first.ready();
    await first.save();
    store.savesStopped = true;
    void first.send('what is the answer?');
    for (;;) {
      const { entries } = await inner.readTranscript('final-1');
      if (entries.some((e) => e.kind === 'message' && e.message.role === 'assistant')) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    store.crash();
    first.stop();
    expect((await inner.load('final-1'))?.state).toBe('AwaitingInput');
    const requests = server.requestCount;
    const second = createAgent({ baseURL: server.url, apiKey: 'k', store: inner, session: 'final-1' });
    await second.ready();
    expect(second.state).toBe('Completed');
    expect(second.restoreReport).toMatchObject({
      savedState: 'AwaitingInput',
      state: 'Completed',
      replayedMessages: 2,
    });
    expect(second.result()).toMatchObject({ response: 'The answer is 42.', terminateReason: 'completed' });
    expect(server.requestCount).toBe(requests);
    second.stop();
    await server.close();
  });
});
