/**
 * `Cassette`: a recorded session read back for replay, from a transcript file or a store. Recorded
 * through the real SDK against the scripted server into a file store; hostile files are named by line.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Cassette, CassetteError, trajectoryOf } from '../src/evals/index.js';
import { defineTool, FileSessionStore, MemorySessionStore } from '../src/index.js';
import { agentAt, serve, testDir } from './support/harness.js';

const echo = defineTool({
  name: 'echo',
  description: 'echoes',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

/** A file store holding session `rec`: one turn with a tool call, its first model call retried once. */
async function recorded(): Promise<{ store: FileSessionStore; file: string; dir: string }> {
  const server = await serve({
    turns: [
      { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], error: { status: 503 }, times: 1 },
      { content: 'done' },
    ],
  });
  const dir = await testDir('cassette-');
  const store = new FileSessionStore({ dir });
  const agent = agentAt(server, {
    tools: [echo],
    store,
    session: 'rec',
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  });
  await agent.send('go');
  await agent.flush();
  agent.stop();
  return { store, file: store.files('rec').transcript, dir };
}

describe('Cassette', () => {
  it('reads the model calls of a recorded session from its file and from its store alike', async () => {
    const { store, file } = await recorded();
    const fromFile = await Cassette.fromFile(file);
    const fromStore = await Cassette.fromSession(store, 'rec');
    expect(fromFile.calls).toEqual(fromStore.calls);
    expect(fromFile.source).toBe(file);
    expect(fromStore.source).toBe('session "rec"');
    expect(
      fromFile.calls.map((c) => [c.record?.iteration, c.record?.attempt, c.record?.finishReason]),
    ).toEqual([
      [1, 2, 'tool_calls'],
      [2, 1, 'stop'],
    ]);
    expect(fromFile.calls.map((c) => c.reply.content)).toEqual([null, 'done']);
    expect(fromFile.calls[0]!.record!.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(trajectoryOf(fromFile.entries)).toMatchObject([{ name: 'echo', args: { text: 'a' } }]);
  });

  it('reads a transcript written before model_call entries: replies without a record', async () => {
    const { file, dir } = await recorded();
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => !l.includes('"model_call"'));
    const old = path.join(dir, 'old.jsonl');
    await writeFile(old, lines.join('\n'));
    const cassette = await Cassette.fromFile(old);
    expect(cassette.calls.map((c) => [c.record, c.reply.content])).toEqual([
      [undefined, null],
      [undefined, 'done'],
    ]);
  });

  it('names the file and the line of a line that is not an entry', async () => {
    const { file, dir } = await recorded();
    const lines = (await readFile(file, 'utf8')).split('\n');
    const at = lines.findIndex((l) => l.includes('"model_call"'));
    const cases: [string, RegExp][] = [
      ['{"seq":', /line 3: not valid JSON/],
      ['[1,2]', /line 3: not a transcript entry \(not a JSON object\)/],
      ['{"seq":0,"at":"x","kind":"message"}', /line 3: not a transcript entry \(missing or invalid "seq"\)/],
    ];
    for (const [bad, message] of cases) {
      const broken = path.join(dir, 'broken.jsonl');
      await writeFile(broken, [...lines.slice(0, 2), bad, ...lines.slice(2)].join('\n'));
      const error = await Cassette.fromFile(broken).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CassetteError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(broken);
    }
    const entry = JSON.parse(lines[at]!) as { data: Record<string, unknown> };
    entry.data.wire = 'carrier-pigeon';
    const wrong = path.join(dir, 'wrong.jsonl');
    await writeFile(wrong, lines.map((l, i) => (i === at ? JSON.stringify(entry) : l)).join('\n'));
    await expect(Cassette.fromFile(wrong)).rejects.toThrow(
      `${wrong} line ${at + 1}: model_call "wire" is not a known API`,
    );
    const settingsAt = lines.findIndex((l) => l.includes('"request_settings"'));
    const settings = JSON.parse(lines[settingsAt]!) as { data: Record<string, unknown> };
    settings.data.settings = ['not', 'an', 'object'];
    await writeFile(wrong, lines.map((l, i) => (i === settingsAt ? JSON.stringify(settings) : l)).join('\n'));
    await expect(Cassette.fromFile(wrong)).rejects.toThrow(
      `${wrong} line ${settingsAt + 1}: request_settings "settings" is not an object`,
    );
  });

  it('names a missing file and a session without a transcript', async () => {
    const missing = path.join(await testDir('cassette-missing-'), 'none.jsonl');
    await expect(Cassette.fromFile(missing)).rejects.toThrow(`${missing}: cannot read the transcript`);
    await expect(Cassette.fromSession(new MemorySessionStore(), 'ghost')).rejects.toThrow(
      'session "ghost": no transcript (unknown session?)',
    );
  });
});
