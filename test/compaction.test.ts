/**
 * Compaction by summary (issue 26): past `contextWindow.compactAt` the agent summarizes the older
 * conversation with one model call, and requests send the summary in its place. Real `openai` SDK over
 * HTTP to the scripted server, whose model answers from what each request holds (so a fact a summary
 * lost fails the test); real session files in temp dirs.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/index.js';
import { startScriptedServer } from '../src/testing/index.js';
import {
  answer,
  BUDGET,
  compactingAgent,
  factOf,
  isSummaryCall,
  questionMessage,
  requestTokens,
  sendsSummary,
  taskMessage,
  tempStores,
} from './support/compaction-scenario.js';
import { assertToolCallsAnswered } from './support/harness.js';

const READS = 5;
const tempStore = tempStores();

describe('compaction by summary', () => {
  it('a session that crosses the window three times keeps working, every fact kept in the summaries', async () => {
    const server = await startScriptedServer({ respond: (request) => answer(request) });
    const store = await tempStore();
    const agent = compactingAgent(server.url, { store });
    const compacted: AgentEvent<'context_compacted'>[] = [];
    const pruned: AgentEvent<'context_pruned'>[] = [];
    agent.on('context_compacted', (e) => compacted.push(e));
    agent.on('context_pruned', (e) => pruned.push(e));
    try {
      for (let k = 1; k <= 4; k++) {
        const result = await agent.send(taskMessage(k, READS));
        expect(result.terminateReason).toBe('completed');
        expect(result.response).toBe(`Done ${k}.`);
      }
      expect(compacted.length).toBe(3);
      // The facts of every task are still known: the scripted model answers from the request only.
      for (let k = 1; k <= 4; k++) {
        const result = await agent.send(questionMessage(k));
        expect(result.response).toBe(`The code of task ${k} is ${factOf(k)}.`);
      }

      const calls = server.requests.filter((r) => !isSummaryCall(r));
      const summaries = server.requests.filter(isSummaryCall);
      expect(summaries).toHaveLength(3);
      // Every request fits the window; from the first compaction on, each sends a summary.
      for (const request of server.requests) expect(requestTokens(request)).toBeLessThanOrEqual(BUDGET);
      const first = calls.findIndex(sendsSummary);
      expect(first).toBeGreaterThan(0);
      expect(calls.slice(first).every(sendsSummary)).toBe(true);
      expect(pruned).toEqual([]);
      for (const e of compacted) expect(e.tokensAfter).toBeLessThan(e.tokensBefore);

      // The conversation keeps every message; the transcript every message and one entry per compaction.
      assertToolCallsAnswered(agent.messages);
      expect(agent.messages.filter((m) => m.role === 'tool')).toHaveLength(4 * READS);
      await agent.flush();
      const { entries } = await store.readTranscript(agent.sessionId);
      const messageEntries = entries.filter((e) => e.kind === 'message');
      expect(messageEntries).toHaveLength(agent.messages.length);
      const entriesOfCompaction = entries.filter((e) => e.kind === 'event' && e.event === 'compaction');
      expect(entriesOfCompaction).toHaveLength(3);
      const last = entriesOfCompaction.at(-1) as { data: Record<string, unknown> };
      expect(last.data).toMatchObject({ model: 'gpt-4o-mini', from: 1 });
      expect(String(last.data.summary)).toContain(factOf(1));
    } finally {
      await agent.close();
      await server.close();
    }
  }, 60_000);

  it('agent.compact(instructions) compacts after a turn, on demand', async () => {
    const server = await startScriptedServer({ respond: (request) => answer(request) });
    const store = await tempStore();
    // A window large enough that nothing compacts by itself.
    const agent = compactingAgent(server.url, { store, contextWindow: { contextWindow: 128_000 } });
    const lines: string[] = [];
    agent.on('context_compacted', (e) => lines.push(`${e.entriesCovered} messages, ${e.model}`));
    try {
      await agent.send(taskMessage(1, 2));
      const running = agent.send(taskMessage(2, 2));
      await expect(agent.compact()).rejects.toThrow(
        /agent.compact\(\): nothing to compact in state Thinking/,
      );
      await running;
      const result = await agent.compact('keep the codes');
      expect(result).toMatchObject({ compacted: true, entriesCovered: 6 });
      expect(result.tokensAfter).toBeLessThan(result.tokensBefore!);
      expect(lines).toEqual(['6 messages, gpt-4o-mini']);
      const summaryCall = server.requests.find(isSummaryCall)!;
      expect(JSON.stringify(summaryCall.messages)).toContain('The user asks: keep the codes');
      const answered = await agent.send(questionMessage(1));
      expect(answered.response).toBe(`The code of task 1 is ${factOf(1)}.`);
      expect(sendsSummary(server.requests.at(-1)!)).toBe(true);
      // Saved at rest with its transcript entry.
      await agent.flush();
      const { entries } = await store.readTranscript(agent.sessionId);
      expect(entries.filter((e) => e.kind === 'event' && e.event === 'compaction')).toHaveLength(1);
    } finally {
      await agent.close();
      await server.close();
    }
  }, 30_000);

  it('agent.compact() says why when there is nothing to compact or compaction is off', async () => {
    const server = await startScriptedServer({ respond: (request) => answer(request) });
    const off = compactingAgent(server.url, { compaction: false });
    const on = compactingAgent(server.url);
    try {
      await off.send(taskMessage(1, 1));
      expect(await off.compact()).toEqual({
        compacted: false,
        reason: 'this agent does not compact (compaction is off)',
      });
      await expect(on.compact()).rejects.toThrow(/nothing to compact in state AwaitingInput/);
      await on.send(taskMessage(1, 1));
      const warnings: string[] = [];
      on.on('limit_warning', (e) => warnings.push(e.message));
      const result = await on.compact();
      expect(result).toEqual({
        compacted: false,
        reason: 'nothing before the last user message is left to summarize',
      });
      expect(warnings).toEqual([
        'Compaction failed (nothing before the last user message is left to summarize); the conversation is unchanged.',
      ]);
      expect(on.context.compaction).toBeNull();
    } finally {
      off.stop();
      on.stop();
      await server.close();
    }
  });
});
