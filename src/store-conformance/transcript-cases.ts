import assert from 'node:assert/strict';
import type { SessionStore } from '../session/session-store.js';
import type { TranscriptEntryInput } from '../session/transcript.js';
import { assertMatches, assertTime, refusal } from './check.js';
import { event, eventName, record } from './fixtures.js';
import type { TestApi } from './test-api.js';

/** The transcript: append-only, seq from 1 in call order, all-or-nothing appends, JSON rules. */
export function transcriptCases({ it }: TestApi, store: () => SessionStore): void {
  it('is empty for a session that has none', async () => {
    assert.deepEqual(await store().readTranscript('absent'), { entries: [] });
  });

  it('returns entries in append order with consecutive seq from 1, stamping at when missing', async () => {
    const started: TranscriptEntryInput = {
      kind: 'tool_call_started',
      toolCallId: 'call_1',
      name: 'read_file',
      args: { path: 'a.txt' },
    };
    const finished: TranscriptEntryInput = {
      kind: 'tool_call_finished',
      toolCallId: 'call_1',
      name: 'read_file',
      result: 'contents',
      isError: false,
      durationMs: 12,
      at: '2020-02-02T00:00:00.000Z',
    };
    await store().appendTranscript('s1', [{ kind: 'message', message: { role: 'user', content: 'hi' } }]);
    await store().appendTranscript('s1', [started, finished]);
    const { entries, torn } = await store().readTranscript('s1');
    assert.equal(torn, undefined);
    assert.deepEqual(
      entries.map((entry) => entry.seq),
      [1, 2, 3],
    );
    assertMatches(entries[0], { kind: 'message', message: { role: 'user', content: 'hi' } }, 'entry 1');
    assertTime(entries[1]?.at, 'entry 2 at');
    assert.deepEqual(entries[1], { ...started, seq: 2, at: entries[1]?.at });
    assert.deepEqual(entries[2], { ...finished, seq: 3 });
  });

  it('keeps the call order of 50 concurrent appends', async () => {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store().appendTranscript('s1', i % 5 === 0 ? [event(`e${i}`), event(`e${i}b`)] : [event(`e${i}`)]),
      ),
    );
    const { entries } = await store().readTranscript('s1');
    const expected = Array.from({ length: 50 }, (_, i) =>
      i % 5 === 0 ? [`e${i}`, `e${i}b`] : [`e${i}`],
    ).flat();
    assert.deepEqual(entries.map(eventName), expected);
    assert.deepEqual(
      entries.map((entry) => entry.seq),
      expected.map((_, i) => i + 1),
    );
  });

  it('continues seq after appends made before the store was asked to read', async () => {
    await store().appendTranscript('s1', [event('a')]);
    await store().readTranscript('s1');
    await store().appendTranscript('s1', [event('b'), event('c')]);
    assert.deepEqual(
      (await store().readTranscript('s1')).entries.map((e) => e.seq),
      [1, 2, 3],
    );
  });

  it('replaces a caller-given seq with its own', async () => {
    const entry = { ...event('x'), seq: 99 } as unknown as TranscriptEntryInput;
    await store().appendTranscript('s1', [entry]);
    assert.equal((await store().readTranscript('s1')).entries[0]?.seq, 1);
  });

  it('appends nothing from a call whose entries include one that is not JSON', async () => {
    await store().appendTranscript('s1', [event('a')]);
    const bad = { kind: 'event', event: 'bad', data: { big: 1n } } as TranscriptEntryInput;
    await refusal(store().appendTranscript('s1', [event('b'), bad]), 'not_serializable');
    await store().appendTranscript('s1', [event('c')]);
    assert.deepEqual((await store().readTranscript('s1')).entries.map(eventName), ['a', 'c']);
  });

  it('records in each save the seq of the last entry appended before it', async () => {
    const s = store();
    await s.appendTranscript('s1', [event('a'), event('b')]);
    assert.equal((await s.save(record('s1'))).transcriptSeq, 2);
    const appending = s.appendTranscript('s1', [event('c')]);
    const saving = s.save(record('s1'));
    await appending;
    assert.equal((await saving).transcriptSeq, 3);
    assert.equal((await s.load('s1'))?.transcriptSeq, 3);
  });

  it('keeps JSON-unsafe values in entries as JSON does', async () => {
    const content = 'ünïcödé 🚀 \ud83d 日本';
    await store().appendTranscript('s1', [
      { kind: 'message', message: { role: 'user', content } },
      { kind: 'event', event: 'e', data: { gone: undefined, list: [undefined] } },
    ]);
    const { entries } = await store().readTranscript('s1');
    assertMatches(entries[0], { message: { content } }, 'entry 1');
    assert.deepEqual(entries[1] && 'data' in entries[1] && entries[1].data, { list: [null] });
  });

  it("keeps a started call's idempotency key and arguments exactly, so a rerun after a restore gets the same key", async () => {
    const started: TranscriptEntryInput = {
      kind: 'tool_call_started',
      toolCallId: 'call_pay',
      name: 'charge_card',
      args: { amount: 12.5, currency: 'EUR', note: 'ünï 🧾' },
      idempotencyKey: 's1:call_pay',
    };
    await store().appendTranscript('s1', [started]);
    const { entries } = await store().readTranscript('s1');
    assert.equal(entries.length, 1);
    assert.deepEqual(entries[0], { ...started, seq: 1, at: entries[0]?.at });
  });
}
