/**
 * The file store's record in two sealed slot files written in place (issue 28): which slot a save
 * writes, what a save cut short at any byte leaves, what a reader in another process sees while a
 * process saves, and sessions of format 1 (one `snapshot.json` replaced by a rename).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/session/file-store/file-session-store.js';
import { RECORD_SLOT_FILES, readSlots, unsealSlot } from '../src/session/file-store/record-slots.js';
import type { SessionRecordInput } from '../src/session/session-store.js';
import { buildStoreForNode } from './support/store-for-node.js';

let root: string;
let dir: string;
let store: FileSessionStore;
const slotFile = (index: 0 | 1, id = 's1') => path.join(dir, id, RECORD_SLOT_FILES[index]);
const record = (n: number, pad = 0): SessionRecordInput => ({
  id: 's1',
  state: `state-${n}`,
  snapshot: { n, pad: 'p'.repeat(pad) },
});
/** The save number and record of a slot file, as the store reads it. */
const slotOf = async (index: 0 | 1) =>
  unsealSlot(await readFile(slotFile(index), 'utf8').catch(() => undefined), index === 0);

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'agentloop-slots-'));
  dir = path.join(root, 'sessions');
  store = new FileSessionStore({ dir });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('record slots', () => {
  it('each save writes the slot that does not hold the newest record, sealed, in files of whole 4 KB blocks', async () => {
    await store.save(record(1));
    expect(await slotOf(0)).toMatchObject({ kind: 'record', seq: 1 });
    expect(await slotOf(1)).toEqual({ kind: 'missing' });
    await store.save(record(2));
    await store.save(record(3));
    expect(await slotOf(0)).toMatchObject({ kind: 'record', seq: 3 });
    expect(await slotOf(1)).toMatchObject({ kind: 'record', seq: 2 });
    expect(JSON.parse(((await slotOf(1)) as { text: string }).text).state).toBe('state-2');
    for (const index of [0, 1] as const) expect((await stat(slotFile(index))).size % 4096).toBe(0);
    expect((await new FileSessionStore({ dir }).load('s1'))?.state).toBe('state-3');
    // A new store goes on from the highest save number, into the older slot.
    await new FileSessionStore({ dir }).save(record(4));
    expect(await slotOf(1)).toMatchObject({ kind: 'record', seq: 4 });
    expect(store.files('s1').snapshot).toBe(slotFile(0));
    await new FileSessionStore({ dir }).load('s1');
    expect((await store.load('s1'))?.state).toBe('state-4');
    expect(store.files('s1').snapshot).toBe(slotFile(1));
  });

  it('a save cut short at any byte leaves the record before it, never a mix of the two', async () => {
    await store.save(record(1, 100));
    const first = await readFile(slotFile(0));
    await store.save(record(2, 100));
    await store.save(record(3, 90)); // into slot 0, over record 1
    const third = await readFile(slotFile(0));
    expect(third.length).toBe(first.length);
    const cuts = [0, 1, 7, 15, 16, 20, 80, 81, 200, 500, 1000];
    for (let cut = 0; cut < third.length; cut += 97) cuts.push(cut);
    const line = (bytes: Buffer) => bytes.toString().split('\n')[0]!.trimEnd();
    expect(line(first).length).toBe(line(third).length + 10);
    for (const cut of cuts) {
      // What slot 0 holds when the write of record 3 stopped after `cut` bytes: record 3 only when its
      // whole line made it (what follows is padding), else record 2 from the other slot.
      const torn = Buffer.concat([third.subarray(0, cut), first.subarray(cut)]);
      await writeFile(slotFile(0), torn);
      const loaded = await new FileSessionStore({ dir }).load('s1');
      const whole = line(torn) === line(third);
      // Record 1's line is longer: its last bytes must be overwritten by record 3's padding too.
      expect(whole).toBe(cut >= line(first).length);
      expect(loaded?.state, `cut after ${cut} bytes`).toBe(whole ? 'state-3' : 'state-2');
    }
    expect(cuts.filter((cut) => cut < line(third).length).length).toBeGreaterThan(8);
    // The next save after such a crash writes the torn slot, not the whole one.
    await writeFile(slotFile(0), third.subarray(0, 300));
    const restarted = new FileSessionStore({ dir });
    await restarted.save(record(4));
    expect(await slotOf(1)).toMatchObject({ kind: 'record', seq: 2 });
    expect(await slotOf(0)).toMatchObject({ kind: 'record', seq: 3 });
    expect((await restarted.load('s1'))?.state).toBe('state-4');
  });

  it('a first save cut short leaves no record: an empty slot loads as none, a slot holding bytes is named broken', async () => {
    await store.save(record(1));
    const bytes = await readFile(slotFile(0));
    await writeFile(slotFile(0), bytes.subarray(0, 150));
    const error = await new FileSessionStore({ dir }).load('s1').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'corrupt', file: slotFile(0) });
    expect((error as Error).message).toMatch(/does not match its seal/);
    // An empty slot (created, nothing written yet: a process killed right after its agent was ready)
    // is no record: the session loads as new and is not listed, and its next save goes on from there.
    await writeFile(slotFile(0), '');
    const reopened = new FileSessionStore({ dir });
    expect(await reopened.load('s1')).toBeUndefined();
    expect(await reopened.list()).toEqual([]);
    await reopened.save(record(2));
    expect((await new FileSessionStore({ dir }).load('s1'))?.state).toBe('state-2');
    // Blanks beside a broken slot are not taken for a first save: the broken one is named.
    await writeFile(slotFile(1), bytes.subarray(0, 150));
    await writeFile(slotFile(0), '');
    expect(await new FileSessionStore({ dir }).load('s1').catch((e: unknown) => e)).toMatchObject({
      code: 'corrupt',
      file: slotFile(1),
    });
  });

  it('ignores what a longer record left after the line break when cutting the file to size did not reach the disk', async () => {
    await store.save(record(1, 9000));
    const long = await readFile(slotFile(0));
    await store.save(record(2));
    await store.save(record(3)); // slot 0 again, shorter: cut from 12 KB to 4 KB
    expect((await stat(slotFile(0))).size).toBe(4096);
    const short = await readFile(slotFile(0));
    await writeFile(slotFile(0), Buffer.concat([short, long.subarray(short.length)]));
    expect((await new FileSessionStore({ dir }).load('s1'))?.state).toBe('state-3');
  });

  it('an edited byte breaks the seal: the slot counts as a save cut short', async () => {
    await store.save(record(1));
    await store.save(record(2));
    const text = await readFile(slotFile(1), 'utf8');
    await writeFile(slotFile(1), text.replace('state-2', 'state-X'));
    expect((await new FileSessionStore({ dir }).load('s1'))?.state).toBe('state-1');
    expect(await slotOf(1)).toMatchObject({ kind: 'broken', reason: expect.stringMatching(/seal/) });
  });

  it('a reader in another process never sees a mix or an error while a process saves', async () => {
    const build = await buildStoreForNode(root);
    const script = path.join(build, 'saver.mjs');
    await writeFile(script, SAVER_SCRIPT);
    await store.save(record(0));
    const child: ChildProcess = spawn(process.execPath, [script, dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const done = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let last = 0;
    let reads = 0;
    let running = true;
    void done.then(() => {
      running = false;
    });
    try {
      while (running) {
        const loaded = await new FileSessionStore({ dir }).load('s1');
        const { n, pad } = (loaded?.snapshot ?? {}) as { n: number; pad: string };
        expect(loaded?.state).toBe(`state-${n}`);
        expect(pad).toBe('p'.repeat((n * 37) % 5000));
        expect(n).toBeGreaterThanOrEqual(last);
        last = n;
        reads++;
      }
    } finally {
      child.kill('SIGKILL');
    }
    expect(await done).toBe(0);
    expect(reads).toBeGreaterThan(20);
    expect((await new FileSessionStore({ dir }).load('s1'))?.state).toBe('state-300');
  }, 60_000);
});

describe('sessions of format 1 (snapshot.json replaced by a rename)', () => {
  const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'sessions-v1');

  it('load as they are; the first save writes both slots, so that an older agentloop refuses them', async () => {
    await cp(fixtures, dir, { recursive: true });
    const id = 'v1-completed';
    const before = await readFile(path.join(dir, id!, 'snapshot.json'), 'utf8');
    const saved = JSON.parse(before);
    expect(saved.formatVersion).toBe(1);
    const loaded = await store.load(id!);
    expect(loaded?.snapshot).toEqual(saved.snapshot);
    await store.save({ ...loaded!, state: 'AwaitingInput' });
    const read = await readSlots(path.join(dir, id!));
    expect(read.slots.map((slot) => slot.kind)).toEqual(['record', 'record']);
    for (const slot of read.slots) {
      expect(JSON.parse((slot as { text: string }).text)).toMatchObject({
        formatVersion: 2,
        state: 'AwaitingInput',
      });
    }
    expect(read).toMatchObject({ newest: 0, seq: 2 });
    // What an agentloop of format 1 reads (the whole file as JSON) carries format 2, which it refuses.
    expect(JSON.parse(await readFile(path.join(dir, id!, 'snapshot.json'), 'utf8')).formatVersion).toBe(2);
  });
});

/** Saves records 1..300 of growing and shrinking size (crossing 4 KB blocks), as fast as it can. */
const SAVER_SCRIPT = `
import { FileSessionStore } from './file-session-store.js';
const store = new FileSessionStore({ dir: process.argv[2] });
for (let n = 1; n <= 300; n++) {
  await store.save({ id: 's1', state: 'state-' + n, snapshot: { n, pad: 'p'.repeat((n * 37) % 5000) } });
}
`;
