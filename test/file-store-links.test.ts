import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../src/index.js';
import {
  FileSessionStore,
  LEASE_FILE,
  TRANSCRIPT_FILE,
} from '../src/session/file-store/file-session-store.js';
import type { SessionRecordInput } from '../src/session/session-store.js';

// A session folder can come with a cloned repository (.agentloop/sessions/<id>/): a link shipped in it
// must never lead a save, an append, an inbox marker or a lease read to the file it aims at. Real
// symbolic links in temp folders; the files they aim at are checked byte for byte afterwards.

let root: string;
let store: FileSessionStore;
/** A file the user can write, outside the sessions folder: what a planted link aims at. */
let victim: string;
const VICTIM_TEXT = 'export PATH=$HOME/bin:$PATH\n# the user own file\n';

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'agentloop-links-'));
  store = new FileSessionStore({ dir: path.join(root, 'sessions') });
  victim = path.join(root, 'victim.txt');
  await writeFile(victim, VICTIM_TEXT);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const record = (id: string): SessionRecordInput => ({
  id,
  state: 'AwaitingInput',
  snapshot: { status: 'active' },
});
const inSession = (id: string, name: string) => path.join(store.dir, id, name);
/** A session folder as a clone ships it: created by hand, no store has written it. */
const planted = async (id: string) => mkdir(path.join(store.dir, id), { recursive: true });
const linkError = (file: string) =>
  expect.objectContaining({ message: expect.stringContaining(`${file} is a symbolic link`), file });

describe('the file store never follows a symbolic link in a session folder', () => {
  it('a record slot that is a link: the save is refused naming it, the target untouched', async () => {
    await store.save(record('s1'));
    const slot = inSession('s1', 'snapshot.1.json');
    await rm(slot, { force: true });
    await symlink(victim, slot);
    const fresh = new FileSessionStore({ dir: store.dir }); // another process: it reads the slots anew
    await expect(fresh.save(record('s1'))).rejects.toEqual(linkError(slot));
    await expect(fresh.load('s1')).rejects.toEqual(linkError(slot));
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);
  });

  it('both slots links in a cloned session: resuming it with an agent fails naming the file', async () => {
    await planted('s2');
    await symlink(victim, inSession('s2', 'snapshot.json'));
    await symlink(victim, inSession('s2', 'snapshot.1.json'));
    // The two slots are read at once: either may be the one named.
    await expect(store.save(record('s2'))).rejects.toThrow(/snapshot(\.1)?\.json is a symbolic link/);
    const agent = createAgent({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k', store, session: 's2' });
    await expect(agent.ready()).rejects.toThrow(/snapshot(\.1)?\.json is a symbolic link/);
    // close, not stop: the lease's release in the session folder is done before the folder is removed
    // (with stop it could still be under way, and the cleanup's rmdir failed ENOTEMPTY).
    await agent.close();
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);
  });

  it('transcript.jsonl as a link: appends are refused naming it, the target gets nothing', async () => {
    await planted('s3');
    const transcript = inSession('s3', TRANSCRIPT_FILE);
    await symlink(victim, transcript);
    await expect(store.appendTranscript('s3', [{ kind: 'event', event: 'x' }])).rejects.toEqual(
      linkError(transcript),
    );
    await expect(store.readTranscript('s3')).rejects.toEqual(linkError(transcript));
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);
  });

  it('a transcript replaced by a link while the store has it open: the next append is refused', async () => {
    await store.appendTranscript('s4', [{ kind: 'event', event: 'first' }]);
    const transcript = inSession('s4', TRANSCRIPT_FILE);
    await rm(transcript);
    await symlink(victim, transcript);
    await expect(store.appendTranscript('s4', [{ kind: 'event', event: 'second' }])).rejects.toEqual(
      linkError(transcript),
    );
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);
  });

  it('a dangling link as a transcript: the file it names is not created', async () => {
    await planted('s5');
    const target = path.join(root, 'created-by-follow.txt');
    await symlink(target, inSession('s5', TRANSCRIPT_FILE));
    await expect(store.appendTranscript('s5', [{ kind: 'event', event: 'x' }])).rejects.toThrow(
      /transcript\.jsonl is a symbolic link/,
    );
    expect(await readdir(root)).not.toContain('created-by-follow.txt');
  });

  it('an inbox done marker as a dangling link: completing is refused and nothing is created', async () => {
    await store.postInbox('s6', { kind: 'message', text: 'hello' });
    const target = path.join(root, 'marker-target');
    const marker = inSession('s6', path.join('inbox', '1.done'));
    await symlink(target, marker);
    await expect(store.completeInbox('s6', [1])).rejects.toEqual(linkError(marker));
    expect(await readdir(root)).not.toContain('marker-target');
  });

  it('an inbox item as a link is refused naming it, not read', async () => {
    await planted('s7');
    await mkdir(inSession('s7', 'inbox'));
    const item = inSession('s7', path.join('inbox', '1.json'));
    await symlink(victim, item);
    await expect(store.readInbox('s7')).rejects.toEqual(linkError(item));
  });

  it('lease.json as a link: taking the session is refused naming it', async () => {
    await planted('s8');
    const lease = inSession('s8', LEASE_FILE);
    await symlink(victim, lease);
    await expect(store.acquireLease('s8', { owner: 'w1', leaseMs: 10_000 })).rejects.toEqual(
      linkError(lease),
    );
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);
  });

  it('a session folder that is a link: nothing is written in the folder it aims at', async () => {
    const elsewhere = path.join(root, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(store.dir, { recursive: true });
    await symlink(elsewhere, path.join(store.dir, 's9'));
    await expect(store.save(record('s9'))).rejects.toThrow(/s9 is a symbolic link/);
    await expect(store.appendTranscript('s9', [{ kind: 'event', event: 'x' }])).rejects.toThrow(
      /s9 is a symbolic link/,
    );
    await expect(store.postInbox('s9', { kind: 'message', text: 'hi' })).rejects.toThrow(
      /s9 is a symbolic link/,
    );
    expect(await readdir(elsewhere)).toEqual([]);
  });
});
