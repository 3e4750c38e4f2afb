import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore, INBOX_DIR } from '../src/session/file-store/file-session-store.js';
import { SessionStoreError } from '../src/session/session-store-error.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { startWorker } from '../src/workers/session-worker.js';
import { buildDist, repoRoot } from './support/build-dist.js';

const dist = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', file)).href);

/**
 * A child process racing others on one sessions folder: it waits until `go` (epoch ms), then either
 * answers one approval per session or claims every session it can, and prints what it got.
 */
const CHILD = `
import { FileSessionStore } from ${dist('index.js')};
const { dir, mode, sessions, go, owner } = JSON.parse(process.argv[2]);
const store = new FileSessionStore({ dir });
while (Date.now() < go) await new Promise((r) => setTimeout(r, 1));
const got = [];
if (mode === 'answer') {
  await Promise.all(sessions.map(async (id) => {
    const item = await store.postInbox(id, { kind: 'approval', toolCallId: 'call_1', approved: owner.endsWith('a') });
    if (item) got.push(id);
  }));
} else {
  for (let round = 0; round < 5; round++) {
    for (const lease of await store.claimSessions({ owner, leaseMs: 60_000, limit: 100 })) got.push(lease.sessionId);
  }
}
process.stdout.write(JSON.stringify({ owner, got }) + '\\n');
// Alive until the parent has every child's answer (it closes stdin then): a lease of a process that
// is gone is free at once, so a child that exited early would hand its sessions to a slower one.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

let work: string;
let script: string;
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  await buildDist();
  work = await mkdtemp(path.join(tmpdir(), 'agentloop-file-inbox-'));
  script = path.join(work, 'child.mjs');
  await writeFile(script, CHILD);
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await rm(work, { recursive: true, force: true });
});

/**
 * Runs `count` children at once on `dir`; resolves with what each printed, once all have printed
 * (each stays alive until then, holding its leases) and exited.
 */
async function race(count: number, config: object): Promise<{ owner: string; got: string[] }[]> {
  const go = Date.now() + 700;
  const children = Array.from({ length: count }, (_, i) => {
    const owner = `child-${i}-${i % 2 ? 'a' : 'r'}`;
    const child = spawn(process.execPath, [script, JSON.stringify({ ...config, go, owner })]);
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<void>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`child exited ${code}: ${err}`)),
      ),
    );
    const answer = new Promise<{ owner: string; got: string[] }>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
      exited.then(() => reject(new Error(`child ${owner} exited without an answer`)), reject);
    });
    return { child, answer, exited };
  });
  try {
    return await Promise.all(children.map((c) => c.answer));
  } finally {
    for (const { child } of children) child.stdin.end();
    await Promise.allSettled(children.map((c) => c.exited));
  }
}

describe('FileSessionStore inbox', () => {
  it('numbers items in post order, refuses a second answer, completes only under a live lease, claims once', async () => {
    const store = new FileSessionStore({ dir: path.join(work, 'one'), fsync: false });
    expect(await store.readInbox('s1')).toEqual([]);
    const first = await store.postInbox('s1', { kind: 'message', text: 'hello' });
    expect(first).toMatchObject({ kind: 'message', text: 'hello', seq: 1 });
    expect(await store.postInbox('s1', { kind: 'approval', toolCallId: 'c1', approved: true })).toMatchObject(
      {
        seq: 2,
      },
    );
    expect(
      await store.postInbox('s1', { kind: 'approval', toolCallId: 'c1', approved: false }),
    ).toBeUndefined();
    await store.postInbox('s1', { kind: 'interrupt' });
    expect((await store.readInbox('s1')).map((i) => [i.seq, i.kind])).toEqual([
      [1, 'message'],
      [2, 'approval'],
      [4, 'interrupt'],
    ]);

    const [lease] = await store.claimSessions({ owner: 'w1', leaseMs: 60_000, limit: 5 });
    expect(lease?.sessionId).toBe('s1');
    // Held: nobody claims it again, the same owner neither.
    expect(await store.claimSessions({ owner: 'w1', leaseMs: 60_000, limit: 5 })).toEqual([]);
    await store.completeInbox('s1', [1, 2], { lease });
    expect((await store.readInbox('s1')).map((i) => i.seq)).toEqual([4]);

    // Taken over: the old owner's completion is refused.
    await store.releaseLease(lease!);
    const [next] = await store.claimSessions({ owner: 'w2', leaseMs: 60_000, limit: 5 });
    expect(next!.token).toBeGreaterThan(lease!.token);
    await expect(store.completeInbox('s1', [4], { lease })).rejects.toMatchObject({ code: 'stale_lease' });
    await store.completeInbox('s1', [4], { lease: next });
    expect(await store.readInbox('s1')).toEqual([]);
    // Nothing open: nothing to claim, and the next post numbers on.
    await store.releaseLease(next!);
    expect(await store.claimSessions({ owner: 'w3', leaseMs: 60_000, limit: 5 })).toEqual([]);
    expect(await store.postInbox('s1', { kind: 'message', text: 'again' })).toMatchObject({ seq: 5 });
  });

  it('hostile inbox files: an error naming the file, reported once by the worker, other sessions go on', async () => {
    const dir = path.join(work, 'hostile');
    const store = new FileSessionStore({ dir, fsync: false });
    await store.postInbox('bad', { kind: 'message', text: 'fine' });
    const inbox = path.join(dir, 'bad', INBOX_DIR);
    await writeFile(path.join(inbox, '2.json'), '{"kind":"message","text":');
    await expect(store.readInbox('bad')).rejects.toThrow(
      `Session "bad": ${path.join(inbox, '2.json')} is corrupt (not JSON`,
    );
    await writeFile(path.join(inbox, '2.json'), JSON.stringify({ kind: 'launch', at: 'now' }));
    const error = await store.readInbox('bad').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreError);
    expect((error as Error).message).toContain('not an inbox item: "kind" is "launch"');
    // Files that are not items are no items.
    await writeFile(path.join(inbox, 'notes.txt'), 'x');

    const server = await startScriptedServer({ scenario: { turns: [{ content: 'Hi.' }] } });
    servers.push(server);
    const errors: string[] = [];
    const worker = startWorker({
      store,
      agent: () => ({ baseURL: server.url, apiKey: 'k' }),
      pollMs: 30,
      onError: (e, id) => errors.push(`${id}: ${(e as Error).message}`),
    });
    await store.postInbox('good', { kind: 'message', text: 'hello' });
    for (let i = 0; i < 200 && (await store.load('good'))?.state !== 'Completed'; i++)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // several polls: the bad session is not retried
    await worker.stop();
    expect((await store.load('good'))?.state).toBe('Completed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`bad: Session "bad": ${path.join(inbox, '2.json')} is corrupt`);
  });

  it('wakes a worker through fs.watch when an item is posted (no polling needed)', async () => {
    const store = new FileSessionStore({ dir: path.join(work, 'watched'), fsync: false });
    const server = await startScriptedServer({ scenario: { turns: [{ content: 'Woken.' }] } });
    servers.push(server);
    // Polls once a minute: only the watch can bring the session in time.
    const worker = startWorker({
      store,
      agent: () => ({ baseURL: server.url, apiKey: 'k' }),
      pollMs: 60_000,
    });
    await new Promise((r) => setTimeout(r, 200));
    const posted = Date.now();
    await store.postInbox('w1', { kind: 'message', text: 'wake up' });
    while ((await store.load('w1'))?.state !== 'Completed' && Date.now() - posted < 5_000)
      await new Promise((r) => setTimeout(r, 20));
    const stopped = worker.stop();
    expect((await store.load('w1'))?.state).toBe('Completed');
    expect(Date.now() - posted).toBeLessThan(5_000);
    await stopped;
  });

  it('two processes: an approval answered from both at once is taken once; a session is claimed by one of them', async () => {
    const dir = path.join(work, 'race');
    const store = new FileSessionStore({ dir, fsync: false });
    const sessions = Array.from({ length: 40 }, (_, i) => `r-${i}`);
    const answers = await race(4, { dir, mode: 'answer', sessions });
    const taken = answers.flatMap((a) => a.got).sort();
    expect(taken).toEqual([...sessions].sort());
    for (const id of sessions) {
      const items = await store.readInbox(id);
      expect(items, id).toHaveLength(1);
      // The answer that counts is the one whose post was taken.
      const winner = answers.find((a) => a.got.includes(id))!;
      expect(items[0]).toMatchObject({ kind: 'approval', approved: winner.owner.endsWith('a') });
    }

    const claims = await race(4, { dir, mode: 'claim' });
    const claimed = claims.flatMap((c) => c.got).sort();
    expect(claimed).toEqual([...sessions].sort());
    // Every claim wrote a lease with its own token; a session's folder keeps at most the last reservation.
    for (const id of sessions) {
      const names = await readdir(path.join(dir, id));
      expect(names.filter((n) => n.endsWith('.claim')).length, id).toBeLessThanOrEqual(1);
    }
  });
});
