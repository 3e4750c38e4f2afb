import assert from 'node:assert/strict';
import { type SessionStore, TITLE_MAX_CHARS } from '../session/session-store.js';
import { SessionStoreError } from '../session/session-store-error.js';
import { assertMatches, assertTime, refusal } from './check.js';
import { event, eventName, readable, record } from './fixtures.js';
import type { TestApi } from './test-api.js';

/** Save and load: the record comes back as saved, times stamped, copies kept, JSON rules applied. */
export function saveAndLoadCases({ it }: TestApi, store: () => SessionStore): void {
  it('round-trips a record, deep-equal to what save returned', async () => {
    const input = record('s1', {
      agentName: 'analyst',
      bundle: 'bundles/demo',
      title: 'Summarize the report',
      turns: 2,
      meta: { model: 'gpt-4o-mini', tags: ['a', 'b'] },
      snapshot: {
        status: 'active',
        value: 'AwaitingInput',
        context: { messages: [{ role: 'user', content: 'hi' }] },
      },
    });
    const saved = await store().save(input);
    assertMatches(saved, { ...input, transcriptSeq: 0 }, 'saved');
    assertTime(saved.createdAt, 'createdAt');
    assert.equal(saved.updatedAt, saved.createdAt);
    assert.deepEqual(await store().load('s1'), saved);
  });

  it('returns undefined for a session that was never saved', async () => {
    assert.equal(await store().load('absent'), undefined);
  });

  it('keeps createdAt from the first save and moves updatedAt forward on every save', async () => {
    const first = await store().save(record('s1', { state: 'AwaitingInput' }));
    const second = await store().save(
      record('s1', { state: 'WaitingApproval', createdAt: '2001-01-01T00:00:00.000Z' }),
    );
    const third = await store().save(record('s1', { state: 'Completed' }));
    assert.equal(second.createdAt, first.createdAt);
    assert.equal(third.createdAt, first.createdAt);
    assert.ok(second.updatedAt > first.updatedAt, `${second.updatedAt} after ${first.updatedAt}`);
    assert.ok(third.updatedAt > second.updatedAt, `${third.updatedAt} after ${second.updatedAt}`);
    assert.deepEqual(await store().load('s1'), third);
  });

  it("uses the caller's createdAt on the first save only", async () => {
    const saved = await store().save(record('s1', { createdAt: '2001-01-01T00:00:00.000Z' }));
    assert.equal(saved.createdAt, '2001-01-01T00:00:00.000Z');
  });

  it('replaces the whole record: fields left out of a later save are gone', async () => {
    await store().save(record('s1', { title: 'first', meta: { a: 1 } }));
    await store().save(record('s1', { state: 'Completed' }));
    const loaded = await store().load('s1');
    assert.equal(loaded?.title, undefined);
    assert.equal(loaded?.meta, undefined);
    assert.equal(loaded?.state, 'Completed');
  });

  it('keeps the call order of saves that were not awaited', async () => {
    const saves = ['AwaitingInput', 'Interrupted', 'Error', 'Completed'].map((state) =>
      store().save(record('s1', { state })),
    );
    await Promise.all(saves);
    assert.equal((await store().load('s1'))?.state, 'Completed');
  });

  it('stores copies: changing an object after save or after load changes nothing stored', async () => {
    const snapshot = { context: { count: 1 } };
    const saving = store().save(record('s1', { snapshot }));
    snapshot.context.count = 2;
    await saving;
    const loaded = await store().load('s1');
    assert.deepEqual(loaded?.snapshot, { context: { count: 1 } });
    (loaded!.snapshot as { context: { count: number } }).context.count = 3;
    assert.deepEqual((await store().load('s1'))?.snapshot, { context: { count: 1 } });
  });

  it('stores JSON values as JSON does: undefined fields dropped, unicode, emoji and lone surrogates kept', async () => {
    const text = 'héllo wörld — 日本語 🤖👩‍💻 \u2028 \u0000 \ud800 "quoted" \\ back';
    const snapshot = {
      text,
      gone: undefined,
      nested: { keep: 1, gone: undefined },
      list: [1, undefined, 'x'],
      nothing: null,
      number: -0.5e-7,
      [text]: 'as key',
    };
    const saved = await store().save(record('s1', { snapshot, title: text, agentName: undefined }));
    const loaded = await store().load('s1');
    assert.deepEqual(loaded, saved);
    assert.deepEqual(loaded?.snapshot, {
      text,
      nested: { keep: 1 },
      list: [1, null, 'x'],
      nothing: null,
      number: -0.5e-7,
      [text]: 'as key',
    });
    assert.equal(loaded?.title, text);
    assert.equal(loaded && 'agentName' in loaded, false);
  });

  it('rejects a snapshot that is not JSON (BigInt, a cycle) and keeps the previous record', async () => {
    const good = await store().save(record('s1', { snapshot: { ok: true } }));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const snapshot of [{ big: 10n }, cyclic]) {
      const error = await refusal(store().save(record('s1', { snapshot })), 'not_serializable');
      assert.match(error.message, /s1/);
    }
    assert.deepEqual(await store().load('s1'), good);
  });
}

/** `list`: newest first, summaries only, titles shortened. */
export function listCases({ it }: TestApi, store: () => SessionStore): void {
  it('is empty for an empty store', async () => {
    assert.deepEqual(await store().list(), []);
  });

  it('lists every session newest first, with summaries and no snapshot', async () => {
    await store().save(record('a', { agentName: 'pm', title: 'first', turns: 1 }));
    await store().save(record('b', { state: 'Completed' }));
    await store().save(record('c', { state: 'WaitingApproval' }));
    await store().save(record('a', { agentName: 'pm', title: 'first', turns: 3 }));
    const rows = await store().list();
    assert.deepEqual(
      rows.map((row) => row.id),
      ['a', 'c', 'b'],
    );
    const [a, c, b] = rows.map(readable);
    assertTime(a?.createdAt, 'createdAt');
    assertTime(a?.updatedAt, 'updatedAt');
    assert.deepEqual(a, {
      id: 'a',
      createdAt: a?.createdAt,
      updatedAt: a?.updatedAt,
      state: 'AwaitingInput',
      agentName: 'pm',
      title: 'first',
      turns: 3,
    });
    assert.equal(c?.state, 'WaitingApproval');
    assert.equal(b?.state, 'Completed');
    assert.equal(
      rows.some((row) => 'snapshot' in row),
      false,
    );
  });

  it('shortens long titles and collapses their whitespace without splitting characters', async () => {
    const title = `Please\n\n  review   ${'🙂'.repeat(200)}`;
    await store().save(record('s1', { title }));
    const [row] = (await store().list()).map(readable);
    const chars = Array.from(row?.title ?? '');
    assert.equal(chars.length, TITLE_MAX_CHARS);
    assert.ok(row?.title?.startsWith('Please review 🙂'), row?.title);
    assert.equal(chars.at(-1), '…');
    assert.equal((await store().load('s1'))?.title, title);
  });

  it('does not list a session that has a transcript but was never saved', async () => {
    await store().appendTranscript('t1', [event('x')]);
    await store().save(record('s1'));
    assert.deepEqual(
      (await store().list()).map((row) => row.id),
      ['s1'],
    );
  });
}

/** `delete`: one session's record and transcript, reporting whether there was anything. */
export function deleteCases({ it }: TestApi, store: () => SessionStore): void {
  it('removes the record and the transcript, and only that session', async () => {
    await store().save(record('s1'));
    await store().appendTranscript('s1', [event('one')]);
    const other = await store().save(record('s2'));
    await store().appendTranscript('s2', [event('two')]);
    assert.equal(await store().delete('s1'), true);
    assert.equal(await store().load('s1'), undefined);
    assert.deepEqual((await store().readTranscript('s1')).entries, []);
    assert.deepEqual(
      (await store().list()).map((row) => row.id),
      ['s2'],
    );
    assert.deepEqual(await store().load('s2'), other);
    assert.equal((await store().readTranscript('s2')).entries.length, 1);
  });

  it('returns false when there is nothing to delete', async () => {
    assert.equal(await store().delete('absent'), false);
    await store().save(record('s1'));
    await store().delete('s1');
    assert.equal(await store().delete('s1'), false);
  });

  it('lets the id be used again from scratch', async () => {
    await store().save(record('s1', { createdAt: '2001-01-01T00:00:00.000Z' }));
    await store().appendTranscript('s1', [event('old')]);
    await store().delete('s1');
    const again = await store().save(record('s1'));
    assert.notEqual(again.createdAt, '2001-01-01T00:00:00.000Z');
    assert.equal(again.transcriptSeq, 0);
    await store().appendTranscript('s1', [event('new')]);
    assert.deepEqual(
      (await store().readTranscript('s1')).entries.map((e) => [e.seq, eventName(e)]),
      [[1, 'new']],
    );
  });
}

/** Ids that cannot name a folder are refused by every call; typical ids work. */
export function sessionIdCases({ it }: TestApi, store: () => SessionStore): void {
  const invalid = [
    '',
    '.',
    '..',
    '../escape',
    'a/b',
    'a\\b',
    '/abs',
    'a..b',
    '.hidden',
    'trailing.',
    'has space',
    'nul\u0000byte',
    'UPPER',
    'ünï',
    'con',
    'x'.repeat(129),
  ];
  for (const id of invalid) {
    it(`rejects ${JSON.stringify(id)} in every call, naming it`, async () => {
      const s = store();
      const calls: Record<string, () => Promise<unknown>> = {
        save: () => s.save(record(id)),
        load: () => s.load(id),
        delete: () => s.delete(id),
        appendTranscript: () => s.appendTranscript(id, [event('x')]),
        readTranscript: () => s.readTranscript(id),
      };
      for (const [name, call] of Object.entries(calls)) {
        const error = await refusal(call(), 'invalid_id');
        assert.ok(error.message.includes(JSON.stringify(id)), `${name}: ${error.message}`);
      }
      assert.deepEqual(await s.list(), []);
    });
  }

  it('accepts typical ids', async () => {
    for (const id of ['a', '20250114-093015-3f9a1c2b', 'my_session.v2', '0', 'x'.repeat(128)]) {
      await store().save(record(id));
      assert.equal((await store().load(id))?.id, id);
    }
  });
}

/** Calls for one session take effect in call order; sessions never see each other's data. */
export function orderAndIsolationCases({ it }: TestApi, store: () => SessionStore): void {
  it('takes calls for a session in call order: a read sees writes called before it, awaited or not', async () => {
    const s = store();
    const saving = s.save(record('s1', { state: 'Interrupted' }));
    const appending = s.appendTranscript('s1', [event('a'), event('b')]);
    const [loaded, transcript, rows] = await Promise.all([s.load('s1'), s.readTranscript('s1'), s.list()]);
    assert.deepEqual(loaded, await saving);
    assert.deepEqual(transcript.entries.map(eventName), ['a', 'b']);
    assert.deepEqual(
      rows.map((row) => row.id),
      ['s1'],
    );
    await appending;
    const deleting = s.delete('s1');
    assert.equal(await s.load('s1'), undefined);
    assert.equal(await deleting, true);
  });

  it('keeps sessions apart', async () => {
    const s = store();
    const a = await s.save(record('alpha', { snapshot: { who: 'alpha' } }));
    const b = await s.save(record('beta', { snapshot: { who: 'beta' } }));
    await s.appendTranscript('alpha', [event('for-alpha')]);
    await s.save(record('alpha', { snapshot: { who: 'alpha-2' } }));
    assert.deepEqual(await s.load('beta'), b);
    assert.equal((await s.load('alpha'))?.createdAt, a.createdAt);
    assert.deepEqual((await s.readTranscript('beta')).entries, []);
    assert.deepEqual((await s.readTranscript('alpha')).entries.map(eventName), ['for-alpha']);
    // Sessions whose ids share a prefix are still separate.
    await s.save(record('alpha-1'));
    assert.deepEqual((await s.readTranscript('alpha-1')).entries, []);
  });

  it('files (optional): names two different places per session, one session apart from another, and checks the id', async () => {
    const s = store();
    if (!s.files) return;
    const one = s.files('s1');
    const two = s.files('s2');
    assert.notEqual(one.snapshot, one.transcript);
    assert.ok(![one.snapshot, one.transcript].includes(two.snapshot));
    assert.ok(![one.snapshot, one.transcript].includes(two.transcript));
    assert.throws(() => s.files?.('../escape'), SessionStoreError);
  });
}
