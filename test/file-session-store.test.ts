import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FileSessionStore,
  resolveSessionsDir,
  SNAPSHOT_FILE,
  SNAPSHOT_FORMAT_VERSION,
  TRANSCRIPT_FILE,
} from '../src/session/file-store/file-session-store.js';
import { sealRecord } from '../src/session/file-store/record-slots.js';
import type { SessionRecordInput, UnreadableSession } from '../src/session/session-store.js';
import { SessionStoreError } from '../src/session/session-store-error.js';
import { toolCallLedger } from '../src/session/transcript.js';
import { describeSessionStoreConformance } from '../src/store-conformance/index.js';
import { buildStoreForNode } from './support/store-for-node.js';

const roots = new Map<FileSessionStore, string>();

describeSessionStoreConformance(
  { describe, it, beforeEach, afterEach },
  {
    name: 'FileSessionStore',
    create: async () => {
      const root = await mkdtemp(path.join(tmpdir(), 'agentloop-store-'));
      const store = new FileSessionStore({ dir: path.join(root, 'sessions') });
      roots.set(store, root);
      return store;
    },
    // Another process's store on the same folder.
    reopen: (store) => new FileSessionStore({ dir: (store as FileSessionStore).dir }),
    dispose: async (store) => {
      const root = roots.get(store as FileSessionStore);
      roots.delete(store as FileSessionStore);
      if (root) await rm(root, { recursive: true, force: true });
    },
  },
);

describe('FileSessionStore', () => {
  let root: string;
  let store: FileSessionStore;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'agentloop-file-store-'));
    store = new FileSessionStore({ dir: path.join(root, 'sessions') });
  });

  afterEach(async () => {
    vi.unstubAllEnvs();
    await rm(root, { recursive: true, force: true });
  });

  const record = (id: string, fields: Partial<SessionRecordInput> = {}): SessionRecordInput => ({
    id,
    state: 'AwaitingInput',
    snapshot: { status: 'active' },
    ...fields,
  });
  const snapshotFile = (id: string) => path.join(store.dir, id, SNAPSHOT_FILE);
  const transcriptFile = (id: string) => path.join(store.dir, id, TRANSCRIPT_FILE);

  describe('where sessions live', () => {
    it('defaults to <projectRoot>/.agentloop/sessions/<id>/ with snapshot.json and transcript.jsonl', async () => {
      const projectStore = new FileSessionStore({ projectRoot: root, env: {} });
      expect(projectStore.dir).toBe(path.join(root, '.agentloop', 'sessions'));
      await projectStore.save(record('s1'));
      await projectStore.appendTranscript('s1', [{ kind: 'event', event: 'x' }]);
      expect((await readdir(path.join(root, '.agentloop', 'sessions', 's1'))).sort()).toEqual([
        SNAPSHOT_FILE,
        TRANSCRIPT_FILE,
      ]);
    });

    it('defaults the project folder to the working directory', () => {
      expect(resolveSessionsDir({ env: {} })).toBe(path.join(process.cwd(), '.agentloop', 'sessions'));
    });

    it('uses $AGENTLOOP_HOME/sessions when AGENTLOOP_HOME is set', async () => {
      const home = path.join(root, 'home');
      vi.stubEnv('AGENTLOOP_HOME', home);
      const homeStore = new FileSessionStore({ projectRoot: path.join(root, 'project') });
      expect(homeStore.dir).toBe(path.join(home, 'sessions'));
      await homeStore.save(record('s1'));
      expect(JSON.parse(await readFile(path.join(home, 'sessions', 's1', SNAPSHOT_FILE), 'utf8')).id).toBe(
        's1',
      );
      expect(resolveSessionsDir({ env: { AGENTLOOP_HOME: 'rel' } })).toBe(path.resolve('rel', 'sessions'));
    });

    it('ignores an empty AGENTLOOP_HOME, and an explicit dir wins over everything', () => {
      expect(resolveSessionsDir({ projectRoot: root, env: { AGENTLOOP_HOME: '' } })).toBe(
        path.join(root, '.agentloop', 'sessions'),
      );
      expect(
        resolveSessionsDir({ dir: path.join(root, 'x'), projectRoot: root, env: { AGENTLOOP_HOME: root } }),
      ).toBe(path.join(root, 'x'));
    });
  });

  describe('file format', () => {
    it('writes snapshot.json as JSON: its seal, the format version, and the snapshot last', async () => {
      await store.save(record('s1', { agentName: 'pm', snapshot: { big: 'x'.repeat(10) } }));
      const text = await readFile(snapshotFile('s1'), 'utf8');
      const value = JSON.parse(text);
      expect(value.save).toEqual({ seq: 1, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(Object.keys(value)).toEqual([
        'save',
        'formatVersion',
        'id',
        'state',
        'createdAt',
        'updatedAt',
        'transcriptSeq',
        'agentName',
        'snapshot',
      ]);
      expect(value.formatVersion).toBe(SNAPSHOT_FORMAT_VERSION);
      expect(SNAPSHOT_FORMAT_VERSION).toBe(2);
    });

    it('writes one JSON entry a line, seq first, each line ending in a newline', async () => {
      await store.appendTranscript('s1', [{ kind: 'event', event: 'a' }]);
      await store.appendTranscript('s1', [
        { kind: 'message', message: { role: 'user', content: 'line\nbreak' } },
      ]);
      const text = await readFile(transcriptFile('s1'), 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      const lines = text.slice(0, -1).split('\n');
      expect(lines).toHaveLength(2);
      expect(lines.map((line) => Object.keys(JSON.parse(line)).slice(0, 3))).toEqual([
        ['seq', 'at', 'kind'],
        ['seq', 'at', 'kind'],
      ]);
    });
  });

  describe('atomic saves', () => {
    it('ignores a half-written temp file left by a crashed save, and the next save removes it', async () => {
      const good = await store.save(record('s1', { snapshot: { n: 1 } }));
      const full = await readFile(snapshotFile('s1'), 'utf8');
      const temp = `${snapshotFile('s1')}.4242-deadbeef.tmp`;
      await writeFile(temp, full.slice(0, full.length / 2));
      const restarted = new FileSessionStore({ dir: store.dir });
      expect(await restarted.load('s1')).toEqual(good);
      expect((await restarted.list()).map((row) => row.id)).toEqual(['s1']);
      await restarted.save(record('s1', { snapshot: { n: 2 } }));
      expect((await readdir(path.dirname(temp))).sort()).toEqual(['snapshot.1.json', SNAPSHOT_FILE]);
      expect((await restarted.load('s1'))?.snapshot).toEqual({ n: 2 });
    });

    it('a save that cannot write its slot fails, and the record saved before stays whole', async () => {
      const first = await store.save(record('s1', { snapshot: { n: 1 } }));
      // A folder in the other slot's place makes the next save fail before it writes anything.
      await mkdir(path.join(store.dir, 's1', 'snapshot.1.json', 'blocker'), { recursive: true });
      await expect(store.save(record('s1', { snapshot: { n: 2 } }))).rejects.toThrow(/EISDIR/);
      await rm(path.join(store.dir, 's1', 'snapshot.1.json'), { recursive: true });
      expect(await store.load('s1')).toEqual(first);
      expect(await new FileSessionStore({ dir: store.dir }).load('s1')).toEqual(first);
      expect((await store.save(record('s1', { snapshot: { n: 3 } }))).snapshot).toEqual({ n: 3 });
      expect((await new FileSessionStore({ dir: store.dir }).load('s1'))?.snapshot).toEqual({ n: 3 });
    });
  });

  describe('corrupt files', () => {
    it('a torn snapshot.json fails load with an error naming the file; list still shows the others', async () => {
      await store.save(record('good-1'));
      await store.save(record('bad'));
      await store.save(record('good-2'));
      const text = await readFile(snapshotFile('bad'), 'utf8');
      await writeFile(snapshotFile('bad'), text.slice(0, 20));

      const restarted = new FileSessionStore({ dir: store.dir });
      const error = await restarted.load('bad').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionStoreError);
      expect(error).toMatchObject({ code: 'corrupt', sessionId: 'bad', file: snapshotFile('bad') });
      expect((error as Error).message).toContain(snapshotFile('bad'));
      expect((error as Error).message).toMatch(/its seal is missing or damaged/);

      const rows = await restarted.list();
      expect(rows.map((row) => row.id).sort()).toEqual(['bad', 'good-1', 'good-2']);
      const bad = rows.find((row) => row.id === 'bad') as UnreadableSession;
      expect(bad).toMatchObject({
        code: 'corrupt',
        file: snapshotFile('bad'),
        updatedAt: expect.any(String),
      });
      expect(bad.error).toContain(snapshotFile('bad'));
      expect(rows.filter((row) => row.error === undefined)).toHaveLength(2);
      expect((await restarted.load('good-1'))?.id).toBe('good-1');
    });

    it('takes an empty snapshot.json (a first save that wrote nothing yet) for no record, not a corrupt one', async () => {
      await mkdir(path.join(store.dir, 's1'), { recursive: true });
      await writeFile(snapshotFile('s1'), '');
      expect(await store.load('s1')).toBeUndefined();
    });

    it.each([
      ['a JSON array', '[]', 'not a JSON object'],
      ['no format version', '{"id":"s1"}', 'formatVersion'],
      [
        'a missing field',
        '{"formatVersion":1,"createdAt":"x","updatedAt":"x","transcriptSeq":0,"snapshot":null}',
        'state',
      ],
    ])('reports %s as corrupt', async (_, content, reason) => {
      await mkdir(path.join(store.dir, 's1'), { recursive: true });
      await writeFile(snapshotFile('s1'), content);
      await expect(store.load('s1')).rejects.toThrow(reason);
      await expect(store.load('s1')).rejects.toMatchObject({ code: 'corrupt', file: snapshotFile('s1') });
    });

    it('refuses a snapshot.json from a newer format version', async () => {
      await store.save(record('s1'));
      const { save: _, ...value } = JSON.parse(await readFile(snapshotFile('s1'), 'utf8'));
      const newer = JSON.stringify({ ...value, formatVersion: SNAPSHOT_FORMAT_VERSION + 1 });
      await writeFile(snapshotFile('s1'), sealRecord(newer, 1));
      await expect(store.load('s1')).rejects.toMatchObject({
        code: 'unsupported_version',
        file: snapshotFile('s1'),
      });
    });

    it('lists a session whose record cannot be read as a file', async () => {
      await store.save(record('ok'));
      await mkdir(snapshotFile('dir'), { recursive: true });
      const rows = await store.list();
      expect(rows.find((row) => row.id === 'dir')).toMatchObject({ code: 'io', file: snapshotFile('dir') });
      expect(rows.find((row) => row.id === 'ok')?.error).toBeUndefined();
    });

    it('saving over a corrupt record moves the bad file aside instead of destroying it', async () => {
      await store.save(record('s1', { createdAt: '2001-01-01T00:00:00.000Z' }));
      await writeFile(snapshotFile('s1'), '{"torn');
      const restarted = new FileSessionStore({ dir: store.dir });
      const saved = await restarted.save(record('s1'));
      expect(saved.createdAt).not.toBe('2001-01-01T00:00:00.000Z');
      const names = await readdir(path.join(store.dir, 's1'));
      const aside = names.find((name) => name.startsWith(`${SNAPSHOT_FILE}.corrupt-`));
      expect(aside).toBeDefined();
      expect(await readFile(path.join(store.dir, 's1', aside!), 'utf8')).toBe('{"torn');
    });

    it('skips and reports a torn last transcript line, and the next append repairs it', async () => {
      await store.appendTranscript(
        's1',
        [1, 2, 3].map((n) => ({ kind: 'event', event: `e${n}` }) as const),
      );
      const torn = '{"seq":4,"at":"2025-01-01T00:00:00.000Z","kind":"tool_call_sta';
      await appendFile(transcriptFile('s1'), torn);

      const restarted = new FileSessionStore({ dir: store.dir });
      const read = await restarted.readTranscript('s1');
      expect(read.entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
      expect(read.torn).toEqual({ file: transcriptFile('s1'), line: 4, bytes: Buffer.byteLength(torn) });

      await restarted.appendTranscript('s1', [{ kind: 'event', event: 'after' }]);
      const repaired = await restarted.readTranscript('s1');
      expect(repaired.torn).toBeUndefined();
      expect(repaired.entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(repaired.entries[3]).toMatchObject({
        kind: 'event',
        event: 'transcript_repaired',
        data: { droppedLine: 4, droppedBytes: Buffer.byteLength(torn), fragment: torn },
      });
      expect(repaired.entries[4]).toMatchObject({ kind: 'event', event: 'after' });
      expect(await readFile(transcriptFile('s1'), 'utf8')).not.toContain(torn);
    });

    it('treats a whole last line without its newline as written, and adds the newline before appending', async () => {
      await store.appendTranscript('s1', [{ kind: 'event', event: 'a' }]);
      const text = await readFile(transcriptFile('s1'), 'utf8');
      await truncate(transcriptFile('s1'), Buffer.byteLength(text) - 1);
      const restarted = new FileSessionStore({ dir: store.dir });
      expect((await restarted.readTranscript('s1')).entries).toHaveLength(1);
      await restarted.appendTranscript('s1', [{ kind: 'event', event: 'b' }]);
      const read = await restarted.readTranscript('s1');
      expect(read.entries.map((entry) => entry.seq)).toEqual([1, 2]);
      expect(read.torn).toBeUndefined();
    });

    it('a corrupt line before the last fails reads and appends with an error naming the file and line', async () => {
      await store.appendTranscript(
        's1',
        [1, 2, 3].map((n) => ({ kind: 'event', event: `e${n}` }) as const),
      );
      const lines = (await readFile(transcriptFile('s1'), 'utf8')).split('\n');
      lines[1] = '{"seq":2,"at":';
      await writeFile(transcriptFile('s1'), lines.join('\n'));
      const restarted = new FileSessionStore({ dir: store.dir });
      for (const call of [
        () => restarted.readTranscript('s1'),
        () => restarted.appendTranscript('s1', [{ kind: 'event', event: 'x' }]),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SessionStoreError);
        expect(error).toMatchObject({ code: 'corrupt', file: transcriptFile('s1'), line: 2 });
        expect((error as Error).message).toContain(`${transcriptFile('s1')} line 2`);
      }
      // The file is left as it was.
      expect(await readFile(transcriptFile('s1'), 'utf8')).toBe(lines.join('\n'));
    });

    it('a line that is JSON but not an entry is corrupt too', async () => {
      await mkdir(path.join(store.dir, 's1'), { recursive: true });
      await writeFile(transcriptFile('s1'), '{"seq":1,"at":"x","kind":"event","event":"a"}\n[1,2]\n');
      await expect(store.readTranscript('s1')).rejects.toMatchObject({ code: 'corrupt', line: 2 });
    });
  });

  describe('restart', () => {
    // A new store on the same folder after a crash: the conformance kit's crash cases (reopen).
    it('list ignores stray files, folders that are not session ids, and half-deleted folders', async () => {
      await store.save(record('s1'));
      await writeFile(path.join(store.dir, 'notes.txt'), 'hi');
      await mkdir(path.join(store.dir, 'Not A Session'));
      await mkdir(path.join(store.dir, '.deleted-s0-1234'));
      await mkdir(path.join(store.dir, 'empty'));
      expect((await store.list()).map((row) => row.id)).toEqual(['s1']);
    });

    it('delete leaves nothing behind', async () => {
      await store.save(record('s1'));
      await store.appendTranscript('s1', [{ kind: 'event', event: 'a' }]);
      await writeFile(path.join(store.dir, 's1', 'extra'), 'x');
      expect(await store.delete('s1')).toBe(true);
      expect(await readdir(store.dir)).toEqual([]);
    });
  });

  describe('a writer killed mid-write', () => {
    let buildDir: string;
    let child: ChildProcess | undefined;

    beforeEach(async () => {
      buildDir = await buildStoreForNode(root);
    });

    afterEach(() => {
      child?.kill('SIGKILL');
    });

    it.each([40, 120, 300])(
      'leaves files the store reads and continues (kill after %i ms)',
      async (delayMs) => {
        const dir = path.join(root, 'sessions');
        const script = path.join(buildDir, 'writer.mjs');
        await writeFile(script, WRITER_SCRIPT);
        const proc = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
        child = proc;
        await new Promise<void>((resolve, reject) => {
          proc.once('error', reject);
          proc.once('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
          proc.stdout?.once('data', () => resolve());
        });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        proc.kill('SIGKILL');
        await exited;

        const restarted = new FileSessionStore({ dir });
        const saved = await restarted.load('crash');
        expect(saved?.state).toBe('AwaitingInput');
        const { entries } = await restarted.readTranscript('crash');
        expect(entries.length).toBeGreaterThan(0);
        expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, i) => i + 1));
        expect(saved!.transcriptSeq).toBeLessThanOrEqual(entries.length);
        // Every call but possibly the last one in flight has its result.
        const unfinished = [...toolCallLedger(entries).values()].filter(
          (call) => call.status !== 'completed',
        );
        expect(unfinished.length).toBeLessThanOrEqual(1);

        await restarted.appendTranscript('crash', [{ kind: 'event', event: 'resumed' }]);
        await restarted.save({ id: 'crash', state: 'AwaitingInput', snapshot: null });
        const after = await restarted.readTranscript('crash');
        expect(after.torn).toBeUndefined();
        expect(after.entries.at(-1)).toMatchObject({
          kind: 'event',
          event: 'resumed',
          seq: after.entries.length,
        });
      },
      90_000, // a build, a child process and fsynced writes: seconds on a loaded machine
    );
  });
});

/** Appends a started and a finished entry per call (the finished one large) and saves every third call. */
const WRITER_SCRIPT = `
import { FileSessionStore } from './file-session-store.js';
const store = new FileSessionStore({ dir: process.argv[2] });
const big = 'r'.repeat(300000);
await store.save({ id: 'crash', state: 'AwaitingInput', snapshot: { i: 0 } });
process.stdout.write('ready\\n');
for (let i = 1; ; i++) {
  const id = 'call_' + i;
  await store.appendTranscript('crash', [{ kind: 'tool_call_started', toolCallId: id, name: 'work', args: { i } }]);
  const writes = [
    store.appendTranscript('crash', [
      { kind: 'tool_call_finished', toolCallId: id, name: 'work', result: big, isError: false, durationMs: 1 },
    ]),
  ];
  if (i % 3 === 0) writes.push(store.save({ id: 'crash', state: 'AwaitingInput', snapshot: { i, big } }));
  await Promise.all(writes);
}
`;
