/**
 * Compaction never bricks a session (issue 26): every way the summary can fail falls back to pruning
 * with a `limit_warning` saying why, a summary that leaves the request too long is followed by
 * pruning, an interrupt while compacting leaves the conversation as it was, and a session whose
 * summary is corrupt or missing restores with pruning. Real SDK over HTTP, real session files.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type AgentEvent, FileSessionStore, type Message } from '../src/index.js';
import { type ScriptedRequest, type ScriptedTurn, startScriptedServer } from '../src/testing/index.js';
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
type Options = Parameters<typeof compactingAgent>[1];

/** A server whose summary calls get `summary` (the other calls the scripted model's answers). */
async function serverWithSummary(summary: (request: ScriptedRequest) => ScriptedTurn) {
  return startScriptedServer({
    respond: (request) => (isSummaryCall(request) ? summary(request) : answer(request)),
  });
}

/** Runs two tasks (the second crosses compactAt) and checks the session went on, pruned to fit. */
async function twoTasksPruned(summary: (request: ScriptedRequest) => ScriptedTurn, extra: Options = {}) {
  const server = await serverWithSummary(summary);
  const agent = compactingAgent(server.url, extra);
  const warnings: AgentEvent<'limit_warning'>[] = [];
  const compacted: AgentEvent<'context_compacted'>[] = [];
  agent.on('limit_warning', (e) => warnings.push(e));
  agent.on('context_compacted', (e) => compacted.push(e));
  try {
    for (let k = 1; k <= 2; k++) {
      const result = await agent.send(taskMessage(k, READS));
      expect(result.terminateReason).toBe('completed');
      expect(result.response).toBe(`Done ${k}.`);
    }
    expect(compacted).toEqual([]);
    for (const request of server.requests) expect(requestTokens(request)).toBeLessThanOrEqual(BUDGET);
    expect(server.requests.some(sendsSummary)).toBe(false);
    // One summary call for the turn: a failed compaction is not retried before every model call.
    expect(server.requests.filter(isSummaryCall)).toHaveLength(1);
    assertToolCallsAnswered(agent.messages);
    return warnings.filter((w) => w.message.startsWith('Compaction failed')).map((w) => w.message);
  } finally {
    await agent.close();
    await server.close();
  }
}

describe('compaction falls back to pruning', () => {
  it('when the summary call fails', async () => {
    const failed = await twoTasksPruned(() => ({ error: { status: 500, message: 'summarizer down' } }));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/summary call failed: .*summarizer down.*old tool results are pruned instead/);
  });

  it('when the summary call times out', async () => {
    const failed = await twoTasksPruned(() => ({ content: 'late', delayMs: 3_000 }), {
      compaction: { timeoutMs: 200 },
    });
    expect(failed).toEqual([expect.stringContaining('the summary call timed out after 200 ms')]);
  });

  it('when the summary is cut by length', async () => {
    const failed = await twoTasksPruned(() => ({ content: 'Facts: FACT-1', finishReason: 'length' }));
    expect(failed).toEqual([expect.stringContaining('the summary was cut off (finish_reason: length)')]);
  });

  it('when the summary is empty', async () => {
    const failed = await twoTasksPruned(() => ({ content: '   ' }));
    expect(failed).toEqual([expect.stringContaining('the summary is empty')]);
  });

  it('when the summary is too long', async () => {
    const failed = await twoTasksPruned(() => ({ content: 'facts '.repeat(400) }), {
      compaction: { maxSummaryTokens: 100 },
    });
    expect(failed).toEqual([expect.stringMatching(/the summary is too long \(\d+ tokens, at most 100\)/)]);
  });
});

describe('compaction that is not enough, or stopped', () => {
  it('a summary that leaves the request above the budget is followed by pruning, once per turn', async () => {
    const server = await serverWithSummary(answer);
    const agent = compactingAgent(server.url);
    const events: string[] = [];
    agent.on('context_compacted', () => events.push('compacted'));
    agent.on('context_pruned', () => events.push('pruned'));
    try {
      await agent.send(taskMessage(1, 2));
      // The second turn alone passes the budget: the summary covers only the first.
      const result = await agent.send(taskMessage(2, 14));
      expect(result.terminateReason).toBe('completed');
      expect(events[0]).toBe('compacted');
      expect(events.slice(1).length).toBeGreaterThan(0);
      expect(events.slice(1).every((e) => e === 'pruned')).toBe(true);
      expect(server.requests.filter(isSummaryCall)).toHaveLength(1);
      for (const request of server.requests) expect(requestTokens(request)).toBeLessThanOrEqual(BUDGET);
      const after = server.requests.filter((r) => !isSummaryCall(r)).slice(-1)[0]!;
      expect(sendsSummary(after)).toBe(true);
      expect(JSON.stringify(after.messages)).toContain(factOf(1));
    } finally {
      await agent.close();
      await server.close();
    }
  }, 30_000);

  it('an interrupt while compacting leaves the conversation exactly as it was; resuming compacts again', async () => {
    let summaries = 0;
    let summaryArrived!: () => void;
    const arrived = new Promise<void>((resolve) => {
      summaryArrived = resolve;
    });
    const server = await serverWithSummary((request) => {
      summaries++;
      if (summaries > 1) return answer(request);
      summaryArrived();
      return { content: 'never sent', delayMs: 10_000 };
    });
    const agent = compactingAgent(server.url);
    try {
      await agent.send(taskMessage(1, READS));
      let before: readonly Message[] = [];
      const off = agent.on('state_change', (e) => {
        if (e.state === 'Compacting') before = structuredClone(agent.messages);
      });
      const turn = agent.send(taskMessage(2, READS));
      await arrived;
      off();
      expect(agent.state).toBe('Compacting');
      agent.interrupt();
      const stopped = await turn;
      expect(stopped.terminateReason).toBe('interrupted');
      expect(agent.messages).toEqual(before);
      expect(agent.context.compaction).toBeNull();
      const resumed = await agent.resume();
      expect(resumed.response).toBe('Done 2.');
      expect(agent.context.compaction?.summary).toContain(factOf(1));
      expect(summaries).toBe(2);
    } finally {
      await agent.close();
      await server.close();
    }
  }, 30_000);
});

describe('restoring a compacted session', () => {
  /** A saved session compacted once; returns its store, id and the requests its last call sent. */
  async function compactedSession() {
    const store = await tempStore();
    const server = await serverWithSummary(answer);
    const agent = compactingAgent(server.url, { store });
    try {
      for (let k = 1; k <= 2; k++) await agent.send(taskMessage(k, READS));
      expect(agent.context.compaction).not.toBeNull();
      await agent.flush();
      return { store, id: agent.sessionId, messages: [...agent.messages] };
    } finally {
      await agent.close();
      await server.close();
    }
  }

  it('rebuilds the same request view from the transcript', async () => {
    const { store, id, messages } = await compactedSession();
    const server = await serverWithSummary(answer);
    const agent = compactingAgent(server.url, {
      store: new FileSessionStore({ dir: store.dir }),
      session: id,
    });
    try {
      await agent.ready();
      expect(agent.messages).toEqual(messages);
      expect(agent.restoreReport?.compaction).toMatchObject({ messages: expect.any(Number) });
      const result = await agent.send(questionMessage(1));
      expect(result.response).toBe(`The code of task 1 is ${factOf(1)}.`);
      expect(sendsSummary(server.requests[0]!)).toBe(true);
    } finally {
      await agent.close();
      await server.close();
    }
  }, 30_000);

  for (const [name, damage] of [
    ['corrupt', (data: Record<string, unknown>) => ({ ...data, summary: '', through: 'x' })],
    ['missing', () => undefined],
  ] as const) {
    it(`restores with pruning when the summary is ${name}`, async () => {
      const { store, id, messages } = await compactedSession();
      const file = store.files(id).transcript;
      const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
      const edited = lines.flatMap((line) => {
        const entry = JSON.parse(line) as { event?: string; data?: Record<string, unknown> };
        if (entry.event !== 'compaction') return [line];
        const data = damage(entry.data!);
        return data === undefined ? [] : [JSON.stringify({ ...entry, data })];
      });
      await writeFile(file, `${edited.join('\n')}\n`);
      const server = await serverWithSummary(answer);
      const agent = compactingAgent(server.url, {
        store: new FileSessionStore({ dir: store.dir }),
        session: id,
        compaction: false,
      });
      try {
        await agent.ready();
        expect(agent.messages).toEqual(messages);
        expect(agent.context.compaction).toBeNull();
        if (name === 'corrupt')
          expect(agent.restoreReport?.compaction).toMatchObject({ problem: expect.any(String) });
        const result = await agent.send(questionMessage(2));
        expect(result.response).toBe(`The code of task 2 is ${factOf(2)}.`);
        expect(sendsSummary(server.requests[0]!)).toBe(false);
        expect(requestTokens(server.requests[0]!)).toBeLessThanOrEqual(BUDGET);
      } finally {
        await agent.close();
        await server.close();
      }
    }, 30_000);
  }
});
