import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_IDLE_SESSIONS,
  FileSessionStore,
  TRANSCRIPT_FILE,
} from '../src/session/file-store/file-session-store.js';

// A long-running process (a server, a worker) touches many sessions over hours. The file store keeps
// what it knows of a session's files (the transcript's last seq and open descriptor, the record's
// slots) only for the sessions used last, those with work queued and those it holds the lease of; a
// session it forgot is read again from its files when next used, as a new process would. The
// descriptors are read from /proc (Linux only).

const hasProc = existsSync('/proc/self/fd');

/** The files this process has open (their paths). */
async function openFiles(): Promise<Set<string>> {
  const files = new Set<string>();
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target) files.add(target);
  }
  return files;
}

const event = (name: string) => ({ kind: 'event' as const, event: name });
const ids = (n: number, prefix = 's') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('FileSessionStore forgets the idle sessions used longest ago', () => {
  let root: string;
  let dir: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'agentloop-idle-sessions-'));
    dir = path.join(root, 'sessions');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const transcriptOf = (id: string) => path.join(dir, id, TRANSCRIPT_FILE);

  it('keeps maxIdleSessions of them; a forgotten one goes on numbering its transcript and saving its record', async () => {
    const store = new FileSessionStore({ dir, fsync: false, maxIdleSessions: 4 });
    const all = ids(12);
    for (const id of all) {
      await store.save({ id, state: 'AwaitingInput', snapshot: { n: 1 } });
      await store.appendTranscript(id, [event('a'), event('b')]);
    }
    await store.list(); // waits for every queued write
    expect(store.sessionsKept).toBe(4);
    if (hasProc) {
      const open = await openFiles();
      expect(all.map((id) => open.has(transcriptOf(id)))).toEqual([
        ...Array(8).fill(false),
        ...Array(4).fill(true),
      ]);
    }
    // Another store writes one forgotten session meanwhile: this one reads it again, as a new process would.
    await new FileSessionStore({ dir, fsync: false }).appendTranscript('s0', [event('other')]);
    for (const id of all) {
      await store.appendTranscript(id, [event('c')]);
      await store.save({ id, state: 'Completed', snapshot: { n: 2 } });
    }
    expect(store.sessionsKept).toBe(4);
    for (const id of all) {
      const seqs = (await store.readTranscript(id)).entries.map((entry) => entry.seq);
      expect(seqs).toEqual(id === 's0' ? [1, 2, 3, 4] : [1, 2, 3]);
      const record = await new FileSessionStore({ dir }).load(id);
      expect(record).toMatchObject({ state: 'Completed', snapshot: { n: 2 }, transcriptSeq: seqs.length });
      expect(await store.load(id)).toEqual(record);
      // Two saves: the second went to the other slot, and the store names it.
      expect(store.files(id).snapshot).toBe(path.join(dir, id, 'snapshot.1.json'));
    }
  });

  it('never forgets a session whose lease it holds, and forgets it once released', async () => {
    const store = new FileSessionStore({ dir, fsync: false, maxIdleSessions: 2 });
    const lease = await store.acquireLease('held', { owner: 'me', leaseMs: 600_000 });
    await store.appendTranscript('held', [event('a')], { lease });
    for (const id of ids(6)) await store.appendTranscript(id, [event('a')]);
    const renewed = await store.renewLease(lease, 600_000);
    for (const id of ids(6, 't')) await store.appendTranscript(id, [event('a')]);
    await store.list();
    expect(store.sessionsKept).toBe(3);
    if (hasProc) expect((await openFiles()).has(transcriptOf('held'))).toBe(true);
    await store.appendTranscript('held', [event('b')], { lease: renewed });
    expect((await store.readTranscript('held')).entries.map((entry) => entry.seq)).toEqual([1, 2]);

    await store.releaseLease(renewed);
    for (const id of ids(2, 'u')) await store.appendTranscript(id, [event('a')]);
    await store.list();
    expect(store.sessionsKept).toBe(2);
    await store.appendTranscript('held', [event('c')]);
    expect((await store.readTranscript('held')).entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
  });

  it('keeps a session it claimed from the inbox while it holds the lease', async () => {
    const store = new FileSessionStore({ dir, fsync: false, maxIdleSessions: 1 });
    await store.postInbox('job', { kind: 'message', text: 'hi' });
    const [claimed] = await store.claimSessions({ owner: 'worker', leaseMs: 600_000, limit: 1 });
    expect(claimed?.sessionId).toBe('job');
    for (const id of ids(3)) await store.appendTranscript(id, [event('a')]);
    await store.list();
    expect(store.sessionsKept).toBe(2);
  });

  it('remembers the record slot of the maxIdleSessions sessions read or written last, and no more', async () => {
    const store = new FileSessionStore({ dir, fsync: false, maxIdleSessions: 2 });
    for (const id of ids(3)) {
      await store.save({ id, state: 'AwaitingInput', snapshot: null });
      await store.save({ id, state: 'AwaitingInput', snapshot: null });
    }
    const slot = (id: string) => path.basename(store.files(id).snapshot);
    expect(ids(3).map(slot)).toEqual(['snapshot.json', 'snapshot.1.json', 'snapshot.1.json']);
    await store.load('s0'); // read again: remembered, and s1 is the one read longest ago now
    expect(ids(3).map(slot)).toEqual(['snapshot.1.json', 'snapshot.json', 'snapshot.1.json']);
  });

  it(`keeps ${DEFAULT_MAX_IDLE_SESSIONS} by default, and refuses a count that is not one`, () => {
    expect(DEFAULT_MAX_IDLE_SESSIONS).toBe(1024);
    for (const bad of [-1, 1.5, Number.NaN, '8' as unknown as number]) {
      expect(() => new FileSessionStore({ dir, maxIdleSessions: bad })).toThrow(
        /FileSessionStore: maxIdleSessions must be a whole number of 0 or more/,
      );
    }
    expect(() => new FileSessionStore({ dir, maxIdleSessions: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});
