/**
 * Replay of a session that compacted (issues 24 and 26): the summary call has no `model_call` entry;
 * the replay answers it with the recorded `compaction` entry's summary, so the requests after it hash
 * as recorded. A compaction the replay skips or adds is a divergence naming it. Real `openai` SDK over
 * HTTP to the scripted server, a real file store in a temp dir.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { Cassette, CassetteError, replaySession } from '../src/evals/index.js';
import type { FileSessionStore } from '../src/index.js';
import { startScriptedServer } from '../src/testing/index.js';
import {
  answer,
  compactingAgent,
  compactingOptions,
  isSummaryCall,
  taskMessage,
  tempStores,
} from './support/compaction-scenario.js';

const tempStore = tempStores();

/** Records three tasks of five reads each on an 8,000-token window: the session compacts twice. */
async function recordCompacting(api: 'chat-completions' | 'responses' = 'chat-completions'): Promise<{
  cassette: Cassette;
  summaryCalls: number;
  responses: string[];
  store: FileSessionStore;
}> {
  const server = await startScriptedServer({ respond: (request) => answer(request) });
  const store = await tempStore();
  const agent = compactingAgent(server.url, { store, session: 'rec', api });
  const responses: string[] = [];
  try {
    for (let k = 1; k <= 3; k++) responses.push((await agent.send(taskMessage(k, 5))).response ?? '');
    await agent.flush();
    const cassette = await Cassette.fromSession(store, 'rec');
    return { cassette, summaryCalls: server.requests.filter(isSummaryCall).length, responses, store };
  } finally {
    await agent.close();
    await server.close();
  }
}

describe('replaySession of a session that compacted', () => {
  it.each(['chat-completions', 'responses'] as const)(
    'replays strict with ok (%s): the summary call is answered from the compaction entry',
    async (api) => {
      const { cassette, summaryCalls, responses } = await recordCompacting(api);
      expect(summaryCalls).toBeGreaterThanOrEqual(2);
      expect(cassette.compactions).toHaveLength(summaryCalls);
      const replay = await replaySession(cassette, { agent: compactingOptions, match: 'strict' });
      expect(replay.divergence).toBeUndefined();
      expect(replay.ok).toBe(true);
      expect(replay.warnings).toEqual([]);
      expect(replay.modelCalls).toBe(cassette.calls.length);
      expect(replay.turns.map((t) => t.result.response)).toEqual(responses);
      for (const turn of replay.turns) expect(turn.result.terminateReason).toBe('completed');
    },
    60_000,
  );

  it('a changed system prompt still diverges at the first call', async () => {
    const { cassette } = await recordCompacting();
    const replay = await replaySession(cassette, {
      agent: { ...compactingOptions, instructions: 'Do the tasks carefully.' },
    });
    expect(replay.ok).toBe(false);
    expect(replay.divergence).toMatchObject({ kind: 'request', step: 1, path: 'messages[0].content' });
  }, 60_000);

  it('a compaction the replay skips or adds is a divergence naming it, not a crash', async () => {
    const { cassette } = await recordCompacting();
    const first = cassette.compactions[0]!;

    const skipped = await replaySession(cassette, { agent: { ...compactingOptions, compaction: false } });
    expect(skipped.ok).toBe(false);
    const { turn, iteration } = cassette.calls[first.afterCalls]!.record!;
    expect(skipped.divergence).toMatchObject({
      kind: 'request',
      step: first.afterCalls + 1,
      turn,
      iteration,
    });
    expect(skipped.divergence?.message).toBe(
      `model call ${first.afterCalls + 1} (turn ${turn}, iteration ${iteration}): the recording compacted the conversation before this call (compaction entry seq ${first.seq}), the replay did not`,
    );

    const early = await replaySession(cassette, {
      agent: { ...compactingOptions, contextWindow: { contextWindow: 8_000, compactAt: 0.3 } },
    });
    expect(early.ok).toBe(false);
    expect(early.divergence?.message).toMatch(
      /^model call \d+ \(turn \d+, iteration \d+\): the agent compacted the conversation \(a summary call\) where the recording did not$/,
    );
    expect(early.divergence!.step).toBeLessThan(first.afterCalls + 1);

    // Sequential: both go on to the end, with a warning naming the compaction.
    const sequential = await replaySession(cassette, {
      agent: { ...compactingOptions, compaction: false },
      match: 'sequential',
    });
    expect(sequential.modelCalls).toBe(cassette.calls.length);
    expect(sequential.warnings).toContain(skipped.divergence!.message);
  }, 60_000);

  it('a compaction entry without a summary is an error naming the line', async () => {
    const { store } = await recordCompacting();
    const file = store.files('rec').transcript;
    const lines = (await readFile(file, 'utf8')).split('\n');
    const at = lines.findIndex((line) => line.includes('"event":"compaction"'));
    expect(at).toBeGreaterThan(0);
    const entry = JSON.parse(lines[at]!);
    entry.data.summary = 42;
    lines[at] = JSON.stringify(entry);
    await writeFile(file, lines.join('\n'));
    const read = Cassette.fromFile(file);
    await expect(read).rejects.toThrow(CassetteError);
    await expect(read).rejects.toThrow(`${file} line ${at + 1}: a compaction entry without a summary`);
  }, 60_000);
});
