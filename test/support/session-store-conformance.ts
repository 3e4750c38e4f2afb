import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type SessionListEntry,
  type SessionRecordInput,
  type SessionStore,
  SessionStoreError,
  type SessionSummary,
  TITLE_MAX_CHARS,
} from '../../src/session/session-store.js';
import type { TranscriptEntryInput } from '../../src/session/transcript.js';
import { ownershipConformance } from './session-ownership-conformance.js';

/**
 * Registers the tests every {@link SessionStore} must pass (like LangGraph's checkpoint-validation).
 * `makeStore` gives an empty store for each test; `cleanup` disposes of it.
 */
export function describeSessionStoreConformance(
  name: string,
  makeStore: () => Promise<SessionStore> | SessionStore,
  cleanup?: (store: SessionStore) => Promise<void> | void,
): void {
  describe(`SessionStore conformance: ${name}`, () => {
    let store: SessionStore;

    beforeEach(async () => {
      store = await makeStore();
    });

    afterEach(async () => {
      await cleanup?.(store);
    });

    describe('save and load', () => {
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
        const saved = await store.save(input);
        expect(saved).toMatchObject({ ...input, transcriptSeq: 0 });
        expect(Number.isNaN(Date.parse(saved.createdAt))).toBe(false);
        expect(saved.updatedAt).toBe(saved.createdAt);
        expect(await store.load('s1')).toEqual(saved);
      });

      it('returns undefined for a session that was never saved', async () => {
        expect(await store.load('absent')).toBeUndefined();
      });

      it('keeps createdAt from the first save and moves updatedAt forward on every save', async () => {
        const first = await store.save(record('s1', { state: 'AwaitingInput' }));
        const second = await store.save(
          record('s1', { state: 'WaitingApproval', createdAt: '2001-01-01T00:00:00.000Z' }),
        );
        const third = await store.save(record('s1', { state: 'Completed' }));
        expect(second.createdAt).toBe(first.createdAt);
        expect(third.createdAt).toBe(first.createdAt);
        expect(second.updatedAt > first.updatedAt).toBe(true);
        expect(third.updatedAt > second.updatedAt).toBe(true);
        expect(await store.load('s1')).toEqual(third);
      });

      it("uses the caller's createdAt on the first save only", async () => {
        const saved = await store.save(record('s1', { createdAt: '2001-01-01T00:00:00.000Z' }));
        expect(saved.createdAt).toBe('2001-01-01T00:00:00.000Z');
      });

      it('replaces the whole record: fields left out of a later save are gone', async () => {
        await store.save(record('s1', { title: 'first', meta: { a: 1 } }));
        await store.save(record('s1', { state: 'Completed' }));
        const loaded = await store.load('s1');
        expect(loaded?.title).toBeUndefined();
        expect(loaded?.meta).toBeUndefined();
        expect(loaded?.state).toBe('Completed');
      });

      it('keeps the call order of saves that were not awaited', async () => {
        const saves = ['AwaitingInput', 'Interrupted', 'Error', 'Completed'].map((state) =>
          store.save(record('s1', { state })),
        );
        await Promise.all(saves);
        expect((await store.load('s1'))?.state).toBe('Completed');
      });

      it('stores copies: changing an object after save or after load changes nothing stored', async () => {
        const snapshot = { context: { count: 1 } };
        const saving = store.save(record('s1', { snapshot }));
        snapshot.context.count = 2;
        await saving;
        const loaded = await store.load('s1');
        expect(loaded?.snapshot).toEqual({ context: { count: 1 } });
        (loaded!.snapshot as { context: { count: number } }).context.count = 3;
        expect((await store.load('s1'))?.snapshot).toEqual({ context: { count: 1 } });
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
        const saved = await store.save(record('s1', { snapshot, title: text, agentName: undefined }));
        const loaded = await store.load('s1');
        expect(loaded).toEqual(saved);
        expect(loaded?.snapshot).toStrictEqual({
          text,
          nested: { keep: 1 },
          list: [1, null, 'x'],
          nothing: null,
          number: -0.5e-7,
          [text]: 'as key',
        });
        expect(loaded?.title).toBe(text);
        expect(loaded && 'agentName' in loaded).toBe(false);
      });

      it('rejects a snapshot that is not JSON (BigInt, a cycle) and keeps the previous record', async () => {
        const good = await store.save(record('s1', { snapshot: { ok: true } }));
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        for (const snapshot of [{ big: 10n }, cyclic]) {
          const error = await store.save(record('s1', { snapshot })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(SessionStoreError);
          expect((error as SessionStoreError).code).toBe('not_serializable');
          expect((error as Error).message).toContain('s1');
        }
        expect(await store.load('s1')).toEqual(good);
      });
    });

    describe('list', () => {
      it('is empty for an empty store', async () => {
        expect(await store.list()).toEqual([]);
      });

      it('lists every session newest first, with summaries and no snapshot', async () => {
        await store.save(record('a', { agentName: 'pm', title: 'first', turns: 1 }));
        await store.save(record('b', { state: 'Completed' }));
        await store.save(record('c', { state: 'WaitingApproval' }));
        await store.save(record('a', { agentName: 'pm', title: 'first', turns: 3 }));
        const rows = await store.list();
        expect(rows.map((row) => row.id)).toEqual(['a', 'c', 'b']);
        const [a, c, b] = rows.map(readable);
        expect(a).toEqual({
          id: 'a',
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          state: 'AwaitingInput',
          agentName: 'pm',
          title: 'first',
          turns: 3,
        });
        expect(c?.state).toBe('WaitingApproval');
        expect(b?.state).toBe('Completed');
        expect(rows.some((row) => 'snapshot' in row)).toBe(false);
        for (const row of rows) expect(row.error).toBeUndefined();
      });

      it('shortens long titles and collapses their whitespace without splitting characters', async () => {
        const title = `Please\n\n  review   ${'🙂'.repeat(200)}`;
        await store.save(record('s1', { title }));
        const [row] = (await store.list()).map(readable);
        const chars = Array.from(row?.title ?? '');
        expect(chars.length).toBe(TITLE_MAX_CHARS);
        expect(row?.title?.startsWith('Please review 🙂')).toBe(true);
        expect(chars.at(-1)).toBe('…');
        expect((await store.load('s1'))?.title).toBe(title);
      });

      it('does not list a session that has a transcript but was never saved', async () => {
        await store.appendTranscript('t1', [event('x')]);
        await store.save(record('s1'));
        expect((await store.list()).map((row) => row.id)).toEqual(['s1']);
      });
    });

    describe('delete', () => {
      it('removes the record and the transcript, and only that session', async () => {
        await store.save(record('s1'));
        await store.appendTranscript('s1', [event('one')]);
        const other = await store.save(record('s2'));
        await store.appendTranscript('s2', [event('two')]);
        expect(await store.delete('s1')).toBe(true);
        expect(await store.load('s1')).toBeUndefined();
        expect((await store.readTranscript('s1')).entries).toEqual([]);
        expect((await store.list()).map((row) => row.id)).toEqual(['s2']);
        expect(await store.load('s2')).toEqual(other);
        expect((await store.readTranscript('s2')).entries).toHaveLength(1);
      });

      it('returns false when there is nothing to delete', async () => {
        expect(await store.delete('absent')).toBe(false);
        await store.save(record('s1'));
        await store.delete('s1');
        expect(await store.delete('s1')).toBe(false);
      });

      it('lets the id be used again from scratch', async () => {
        await store.save(record('s1', { createdAt: '2001-01-01T00:00:00.000Z' }));
        await store.appendTranscript('s1', [event('old')]);
        await store.delete('s1');
        const again = await store.save(record('s1'));
        expect(again.createdAt).not.toBe('2001-01-01T00:00:00.000Z');
        expect(again.transcriptSeq).toBe(0);
        await store.appendTranscript('s1', [event('new')]);
        expect((await store.readTranscript('s1')).entries.map((e) => [e.seq, eventName(e)])).toEqual([
          [1, 'new'],
        ]);
      });
    });

    describe('transcript', () => {
      it('is empty for a session that has none', async () => {
        expect(await store.readTranscript('absent')).toEqual({ entries: [] });
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
        await store.appendTranscript('s1', [{ kind: 'message', message: { role: 'user', content: 'hi' } }]);
        await store.appendTranscript('s1', [started, finished]);
        const { entries, torn } = await store.readTranscript('s1');
        expect(torn).toBeUndefined();
        expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
        expect(entries[0]).toMatchObject({ kind: 'message', message: { role: 'user', content: 'hi' } });
        expect(entries[1]).toEqual({ ...started, seq: 2, at: expect.any(String) });
        expect(Number.isNaN(Date.parse(entries[1]?.at ?? ''))).toBe(false);
        expect(entries[2]).toEqual({ ...finished, seq: 3 });
      });

      it('keeps the call order of 50 concurrent appends', async () => {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            store.appendTranscript('s1', i % 5 === 0 ? [event(`e${i}`), event(`e${i}b`)] : [event(`e${i}`)]),
          ),
        );
        const { entries } = await store.readTranscript('s1');
        const expected = Array.from({ length: 50 }, (_, i) =>
          i % 5 === 0 ? [`e${i}`, `e${i}b`] : [`e${i}`],
        ).flat();
        expect(entries.map(eventName)).toEqual(expected);
        expect(entries.map((entry) => entry.seq)).toEqual(expected.map((_, i) => i + 1));
      });

      it('continues seq after appends made before the store was asked to read', async () => {
        await store.appendTranscript('s1', [event('a')]);
        await store.readTranscript('s1');
        await store.appendTranscript('s1', [event('b'), event('c')]);
        expect((await store.readTranscript('s1')).entries.map((e) => e.seq)).toEqual([1, 2, 3]);
      });

      it('replaces a caller-given seq with its own', async () => {
        const entry = { ...event('x'), seq: 99 } as unknown as TranscriptEntryInput;
        await store.appendTranscript('s1', [entry]);
        expect((await store.readTranscript('s1')).entries[0]?.seq).toBe(1);
      });

      it('appends nothing from a call whose entries include one that is not JSON', async () => {
        await store.appendTranscript('s1', [event('a')]);
        const bad = { kind: 'event', event: 'bad', data: { big: 1n } } as TranscriptEntryInput;
        await expect(store.appendTranscript('s1', [event('b'), bad])).rejects.toThrow(SessionStoreError);
        await store.appendTranscript('s1', [event('c')]);
        expect((await store.readTranscript('s1')).entries.map(eventName)).toEqual(['a', 'c']);
      });

      it('records in each save the seq of the last entry appended before it', async () => {
        await store.appendTranscript('s1', [event('a'), event('b')]);
        expect((await store.save(record('s1'))).transcriptSeq).toBe(2);
        const appending = store.appendTranscript('s1', [event('c')]);
        const saving = store.save(record('s1'));
        await appending;
        expect((await saving).transcriptSeq).toBe(3);
        expect((await store.load('s1'))?.transcriptSeq).toBe(3);
      });

      it('keeps JSON-unsafe values in entries as JSON does', async () => {
        const content = 'ünïcödé 🚀 \ud83d 日本';
        await store.appendTranscript('s1', [
          { kind: 'message', message: { role: 'user', content } },
          { kind: 'event', event: 'e', data: { gone: undefined, list: [undefined] } },
        ]);
        const { entries } = await store.readTranscript('s1');
        expect(entries[0]).toMatchObject({ message: { content } });
        expect(entries[1]).toMatchObject({ data: { list: [null] } });
        expect(entries[1] && 'data' in entries[1] && entries[1].data).toStrictEqual({ list: [null] });
      });
    });

    it('takes calls for a session in call order: a read sees writes called before it, awaited or not', async () => {
      const saving = store.save(record('s1', { state: 'Interrupted' }));
      const appending = store.appendTranscript('s1', [event('a'), event('b')]);
      const [loaded, transcript, rows] = await Promise.all([
        store.load('s1'),
        store.readTranscript('s1'),
        store.list(),
      ]);
      expect(loaded).toEqual(await saving);
      expect(transcript.entries.map(eventName)).toEqual(['a', 'b']);
      expect(rows.map((row) => row.id)).toEqual(['s1']);
      await appending;
      const deleting = store.delete('s1');
      expect(await store.load('s1')).toBeUndefined();
      expect(await deleting).toBe(true);
    });

    it('keeps sessions apart', async () => {
      const a = await store.save(record('alpha', { snapshot: { who: 'alpha' } }));
      const b = await store.save(record('beta', { snapshot: { who: 'beta' } }));
      await store.appendTranscript('alpha', [event('for-alpha')]);
      await store.save(record('alpha', { snapshot: { who: 'alpha-2' } }));
      expect(await store.load('beta')).toEqual(b);
      expect((await store.load('alpha'))?.createdAt).toBe(a.createdAt);
      expect((await store.readTranscript('beta')).entries).toEqual([]);
      expect((await store.readTranscript('alpha')).entries.map(eventName)).toEqual(['for-alpha']);
      // Sessions whose ids share a prefix are still separate.
      await store.save(record('alpha-1'));
      expect((await store.readTranscript('alpha-1')).entries).toEqual([]);
    });

    describe('session ids', () => {
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

      it.each(invalid.map((id) => [JSON.stringify(id), id]))(
        'rejects %s in every call, naming it',
        async (_, id) => {
          const calls: Array<() => Promise<unknown>> = [
            () => store.save(record(id)),
            () => store.load(id),
            () => store.delete(id),
            () => store.appendTranscript(id, [event('x')]),
            () => store.readTranscript(id),
          ];
          for (const call of calls) {
            const error = await call().catch((e: unknown) => e);
            expect(error).toBeInstanceOf(SessionStoreError);
            expect((error as SessionStoreError).code).toBe('invalid_id');
            expect((error as Error).message).toContain(JSON.stringify(id));
          }
          expect(await store.list()).toEqual([]);
        },
      );

      it('accepts typical ids', async () => {
        for (const id of ['a', '20250114-093015-3f9a1c2b', 'my_session.v2', '0', 'x'.repeat(128)]) {
          await store.save(record(id));
          expect((await store.load(id))?.id).toBe(id);
        }
      });
    });

    describe('ownership and inbox', () => ownershipConformance(() => store));

    describe('files (optional)', () => {
      it('names two different places per session, one session apart from another, and checks the id', () => {
        if (!store.files) return;
        const one = store.files('s1');
        const two = store.files('s2');
        expect(one.snapshot).not.toBe(one.transcript);
        expect([one.snapshot, one.transcript]).not.toContain(two.snapshot);
        expect([one.snapshot, one.transcript]).not.toContain(two.transcript);
        expect(() => store.files?.('../escape')).toThrow(SessionStoreError);
      });
    });
  });
}

function record(id: string, fields: Partial<SessionRecordInput> = {}): SessionRecordInput {
  return { id, state: 'AwaitingInput', snapshot: { status: 'active' }, ...fields };
}

function event(name: string): TranscriptEntryInput {
  return { kind: 'event', event: name };
}

function readable(row: SessionListEntry): SessionSummary {
  if (row.error !== undefined) throw new Error(`unexpected unreadable session: ${row.error}`);
  return row;
}

function eventName(entry: { kind: string; event?: string }): string | undefined {
  return entry.kind === 'event' ? entry.event : undefined;
}
