// What a file store keeps for sessions it touched and no longer uses, one build per process (heap
// figures from one process do not mix): a store (`fsync: false`, a temp folder) saves a record and
// appends a transcript entry to each of `--sessions` sessions, one after another; then the heap used
// (after a full collection) against before the first session, per session and in all. Then the hot
// path: appends to one of 16 recently used sessions in turn, awaited, ns per append (median of
// `--rounds`) and promises per append (an async_hooks PROMISE hook, exact and load-free); and the
// write queue alone as the file store makes it (idle lanes kept, at most 1,024 in builds that bound
// them; a build before takes the bound for `true`), a trivial run awaited over the same 16 sessions,
// ns per run: what the LRU touch adds, without the file system's noise. `--queue-dists=a,b` times the
// queues of several builds in this process, their rounds alternating (so the load falls on each alike).
// npm run build && node --expose-gc bench/file-store-idle-sessions.mjs [--dist=dist] [--sessions=20000]
//   [--calls=20000] [--rounds=5]
import { createHook } from 'node:async_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dist = path.resolve(args.dist ?? path.join(here, '..', 'dist'));
const sessions = Number(args.sessions ?? 20_000);
const calls = Number(args.calls ?? 20_000);
const rounds = Number(args.rounds ?? 5);
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const { FileSessionStore } = await import(
  pathToFileURL(path.join(dist, 'session/file-store/file-session-store.js')).href
);
const queueDists = (args['queue-dists'] ?? dist).split(',').map((d) => path.resolve(d));
const queueClasses = [];
for (const d of queueDists) {
  const url = pathToFileURL(path.join(d, 'session/session-write-queue.js')).href;
  queueClasses.push((await import(url)).SessionWriteQueue);
}

/** Heap used after full collections (twice: weak callbacks run after the first). */
async function heapUsed() {
  for (let i = 0; i < 2; i++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

const entry = [{ kind: 'event', event: 'e', data: { i: 1 } }];
const root = await mkdtemp(path.join(tmpdir(), 'agentloop-idle-sessions-'));
try {
  const store = new FileSessionStore({ dir: path.join(root, 'sessions'), fsync: false });
  // Warm the code paths before the first reading.
  await store.save({ id: 'warm', state: 'AwaitingInput', snapshot: null });
  await store.appendTranscript('warm', entry);
  const before = await heapUsed();
  const started = performance.now();
  for (let i = 0; i < sessions; i++) {
    const id = `s${i}`;
    await store.save({ id, state: 'AwaitingInput', snapshot: null });
    await store.appendTranscript(id, entry);
  }
  const touchMs = performance.now() - started;
  await store.list().catch(() => {}); // waits for every queued write (the descriptors' closes too)
  const after = await heapUsed();

  // The hot path: 16 sessions used in turn, each a recently used one.
  const hot = Array.from({ length: 16 }, (_, i) => `s${sessions - 1 - i}`);
  const perRound = [];
  for (let round = 0; round < rounds; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await store.appendTranscript(hot[i % hot.length], entry);
    perRound.push(Number(process.hrtime.bigint() - t0) / calls);
  }
  perRound.sort((a, b) => a - b);
  let promises = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++;
    },
  });
  hook.enable();
  for (let i = 0; i < 1000; i++) await store.appendTranscript(hot[i % hot.length], entry);
  hook.disable();

  const queues = queueClasses.map(
    (Queue) => new Queue({ state: (id) => ({ id }), keepIdleLanes: { max: 1024 } }),
  );
  const task = () => {};
  const queueRounds = queues.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [q, queue] of queues.entries()) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < calls * 5; i++) await queue.run(hot[i % hot.length], task);
      queueRounds[q].push(Number(process.hrtime.bigint() - t0) / (calls * 5));
    }
  }
  for (const list of queueRounds) list.sort((a, b) => a - b);

  const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);
  console.log(`build ${args.dist ?? 'dist'}, ${sessions} sessions`);
  console.log(
    `heap used: before ${mb(before)} MB, after ${mb(after)} MB: +${mb(after - before)} MB, ` +
      `${Math.round((after - before) / sessions)} B a session (touching them took ${(touchMs / 1000).toFixed(1)} s)`,
  );
  console.log(
    `hot append (16 recent sessions, fsync off): median ${Math.round(perRound[rounds >> 1])} ns ` +
      `(rounds ${perRound.map((n) => Math.round(n)).join(' / ')}), ${(promises / 1000).toFixed(2)} promises an append`,
  );
  for (const [q, list] of queueRounds.entries()) {
    console.log(
      `the queue alone (${queueDists[q]}), a run awaited (16 recent sessions): median ` +
        `${Math.round(list[rounds >> 1])} ns (rounds ${list.map((n) => Math.round(n)).join(' / ')})`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
