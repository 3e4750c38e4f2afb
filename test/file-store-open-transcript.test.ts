import { constants, existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionStore, TRANSCRIPT_FILE } from '../src/session/file-store/file-session-store.js';

// The file store keeps a session's transcript open between appends (issue 28: a rest point costs one
// trip through the thread pool per append, not open, write, flush and close). What that must not
// change: every append is durable when it resolves (the descriptor is O_DSYNC), an append goes to the
// file the path names now (not to one removed or replaced since), and a store does not hold a
// descriptor per session forever. The descriptors are read from /proc (Linux only).

const hasProc = existsSync('/proc/self/fdinfo');

/** This process's open descriptors of `file`, with their open flags. */
async function openDescriptors(file: string): Promise<{ fd: string; flags: number }[]> {
  const found: { fd: string; flags: number }[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== file) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const flags = /^flags:\s+([0-7]+)$/m.exec(info)?.[1];
    if (flags) found.push({ fd, flags: Number.parseInt(flags, 8) });
  }
  return found;
}

const event = (name: string) => ({ kind: 'event' as const, event: name });

describe.skipIf(!hasProc)('FileSessionStore keeps the transcript open', () => {
  let root: string;
  let dir: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'agentloop-open-transcript-'));
    dir = path.join(root, 'sessions');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const transcriptOf = (id: string) => path.join(dir, id, TRANSCRIPT_FILE);

  it('with fsync, one descriptor that appends and flushes every write (O_APPEND | O_DSYNC)', async () => {
    const store = new FileSessionStore({ dir });
    await store.appendTranscript('s1', [event('a')]);
    await store.appendTranscript('s1', [event('b')]);
    const open = await openDescriptors(transcriptOf('s1'));
    expect(open).toHaveLength(1);
    const flags = open[0]!.flags;
    expect(flags & constants.O_APPEND).toBe(constants.O_APPEND);
    expect(flags & constants.O_DSYNC).toBe(constants.O_DSYNC);
    expect((await store.readTranscript('s1')).entries.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('without fsync (throwaway sessions) the writes are not flushed', async () => {
    const store = new FileSessionStore({ dir, fsync: false });
    await store.appendTranscript('s1', [event('a')]);
    const [open] = await openDescriptors(transcriptOf('s1'));
    expect(open!.flags & constants.O_DSYNC).toBe(0);
  });

  it('an append after the file was removed writes a new file, not the removed one', async () => {
    const store = new FileSessionStore({ dir });
    await store.appendTranscript('s1', [event('a')]);
    await rm(transcriptOf('s1'));
    await store.appendTranscript('s1', [event('b')]);
    const { entries } = await store.readTranscript('s1');
    expect(entries.map((e) => [e.seq, e.kind === 'event' && e.event])).toEqual([[1, 'b']]);
  });

  it('an append after the file was replaced goes to the new file, numbered after its last line', async () => {
    const store = new FileSessionStore({ dir });
    await store.appendTranscript('s1', [event('a'), event('b'), event('c')]);
    const backup = path.join(root, 'backup.jsonl');
    const firstLine = (await readFile(transcriptOf('s1'), 'utf8')).split('\n')[0];
    await writeFile(backup, `${firstLine}\n`);
    await rename(backup, transcriptOf('s1'));
    await store.appendTranscript('s1', [event('d')]);
    const { entries } = await store.readTranscript('s1');
    expect(entries.map((e) => [e.seq, e.kind === 'event' && e.event])).toEqual([
      [1, 'a'],
      [2, 'd'],
    ]);
  });

  it('a session deleted by another store is written again from its first line', async () => {
    const store = new FileSessionStore({ dir });
    await store.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    await store.appendTranscript('s1', [event('a')]);
    expect(await new FileSessionStore({ dir }).delete('s1')).toBe(true);
    await store.appendTranscript('s1', [event('b')]);
    await store.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    const reader = new FileSessionStore({ dir });
    expect((await reader.readTranscript('s1')).entries.map((e) => e.seq)).toEqual([1]);
    expect((await reader.load('s1'))?.transcriptSeq).toBe(1);
  });

  it('a save after the session folder was removed by hand makes the folder again (as every save did)', async () => {
    const store = new FileSessionStore({ dir });
    await store.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    await rm(path.join(dir, 's1'), { recursive: true });
    await store.save({ id: 's1', state: 'Completed', snapshot: null });
    expect((await new FileSessionStore({ dir }).load('s1'))?.state).toBe('Completed');
  });

  it('keeps at most 64 transcripts open, closing the one used longest ago', async () => {
    const store = new FileSessionStore({ dir, fsync: false });
    const ids = Array.from({ length: 70 }, (_, i) => `s${i}`);
    for (const id of ids) await store.appendTranscript(id, [event('a')]);
    await store.list(); // waits for the queued closes
    const open = await Promise.all(ids.map(async (id) => (await openDescriptors(transcriptOf(id))).length));
    expect(open.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(open.slice(6).every((n) => n === 1)).toBe(true);
    // A closed one opens again and goes on numbering.
    await store.appendTranscript('s0', [event('b')]);
    expect((await store.readTranscript('s0')).entries.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('releasing the lease closes the file', async () => {
    const store = new FileSessionStore({ dir });
    const lease = await store.acquireLease('s1', { owner: 'me', leaseMs: 60_000 });
    await store.appendTranscript('s1', [event('a')], { lease });
    expect(await openDescriptors(transcriptOf('s1'))).toHaveLength(1);
    await store.releaseLease(lease);
    expect(await openDescriptors(transcriptOf('s1'))).toEqual([]);
  });

  it('a store let go without releasing its sessions frees their descriptors when collected', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await (async () => {
      const store = new FileSessionStore({ dir, fsync: false });
      await store.appendTranscript('s1', [event('a')]);
    })();
    expect(await openDescriptors(transcriptOf('s1'))).toHaveLength(1);
    for (let i = 0; i < 20 && (await openDescriptors(transcriptOf('s1'))).length > 0; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await openDescriptors(transcriptOf('s1'))).toEqual([]);
  });
});
