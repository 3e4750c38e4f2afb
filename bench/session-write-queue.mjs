// What the per-session write queue costs a store call, on one or more builds in one process (their
// rounds alternate, so the machine's load falls on each alike):
// - promises made per file-store call (`fsync: false`, a temp folder): a save, a lone append, and
//   each append of eight given at once while the session is busy (they join one write); counted with
//   an async_hooks PROMISE hook, so exact and load-free (the fs calls' own promises are the same in
//   every build: a difference is the queue's);
// - the queue alone (the PostgreSQL store's; `SessionQueue` in builds before the file store shared
//   it): promises per call and wall per call, serial (each awaited) and in bursts of 16.
// npm run build && node bench/session-write-queue.mjs [--dist=dist[,other-dist]] [--calls=20000] [--rounds=5]
import { createHook } from 'node:async_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dists = (args.dist ?? path.join(here, '..', 'dist')).split(',').map((d) => path.resolve(d));
const calls = Number(args.calls ?? 20_000);
const rounds = Number(args.rounds ?? 5);

let promises = 0;
const hook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
});
/** Promises made while `work` runs, over `n` calls. */
async function promisesPer(n, work) {
  promises = 0;
  hook.enable();
  await work();
  hook.disable();
  return promises / n;
}

const entry = (i) => [{ kind: 'event', event: 'e', data: { i } }];
const snapshot = { status: 'active', value: 'AwaitingInput', context: { pad: 'y'.repeat(200) } };

/** The queue class of a build, behind the shape of today's (`append(id, bodies, options, write)`). */
async function queueOf(dist) {
  const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
  const shared = await load('session/session-write-queue.js').catch(() => undefined);
  if (shared) return () => new shared.SessionWriteQueue();
  const { SessionQueue } = await load('postgres/session-queue.js');
  return () => {
    const queue = new SessionQueue();
    return {
      run: (id, task) => queue.run(id, task),
      append: (id, bodies, options, write) =>
        queue.append(id, options.lease ? `${options.lease.owner}#${options.lease.token}` : '', bodies, (b) =>
          write(b, options),
        ),
    };
  };
}

const builds = [];
for (const dist of dists) {
  const { FileSessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  builds.push({ dist, FileSessionStore, makeQueue: await queueOf(dist) });
}

const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-write-queue-'));
try {
  console.log('promises per file-store call (fsync: false):');
  for (const [b, { dist, FileSessionStore }] of builds.entries()) {
    const store = new FileSessionStore({ dir: path.join(dir, `b${b}`), fsync: false });
    const id = 's1';
    for (let i = 0; i < 50; i++) {
      await store.appendTranscript(id, entry(i));
      await store.save({ id, state: 'AwaitingInput', snapshot, turns: i });
    }
    const n = 200;
    const save = await promisesPer(n, async () => {
      for (let i = 0; i < n; i++) await store.save({ id, state: 'AwaitingInput', snapshot, turns: i });
    });
    const append = await promisesPer(n, async () => {
      for (let i = 0; i < n; i++) await store.appendTranscript(id, entry(i));
    });
    // Eight appends while a save runs: they join one write.
    const joined = await promisesPer(n * 8, async () => {
      for (let i = 0; i < n; i++) {
        const saved = store.save({ id, state: 'AwaitingInput', snapshot, turns: i });
        const appends = [];
        for (let j = 0; j < 8; j++) appends.push(store.appendTranscript(id, entry(j)));
        await Promise.all([saved, ...appends]);
      }
    });
    // Less the save's own promises, so the figure is the appends'.
    console.log(
      `  ${path.relative(process.cwd(), dist) || dist}: save ${save.toFixed(2)}, append ${append.toFixed(2)}, ` +
        `each of 8 joined appends ${(joined - save / 8).toFixed(2)}`,
    );
  }

  console.log('the queue alone: promises per call');
  for (const { dist, makeQueue } of builds) {
    const queue = makeQueue();
    const task = () => Promise.resolve();
    const write = () => Promise.resolve();
    const n = 1000;
    const run = await promisesPer(n, async () => {
      for (let i = 0; i < n; i++) await queue.run('s', task);
    });
    // As a store's tasks do: the next call comes after I/O, in a later turn of the event loop.
    const io = () => new Promise((resolve) => setImmediate(resolve));
    const runIo = await promisesPer(n, async () => {
      for (let i = 0; i < n; i++) await queue.run('s', io);
    });
    const append = await promisesPer(n, async () => {
      for (let i = 0; i < n; i++) await queue.append('s', ['x'], {}, write);
    });
    const burst = await promisesPer(n * 16, async () => {
      for (let i = 0; i < n; i++) {
        const all = [];
        for (let j = 0; j < 16; j++) all.push(queue.run(`s${j % 4}`, task));
        await Promise.all(all);
      }
    });
    console.log(
      `  ${path.relative(process.cwd(), dist) || dist}: run ${run.toFixed(2)} (awaited), ` +
        `run of a task that waits for I/O ${(runIo - 1).toFixed(2)} (awaited; less the task's own), append ${append.toFixed(2)} ` +
        `(awaited), run in bursts of 16 over 4 sessions ${burst.toFixed(2)}`,
    );
  }

  const walls = builds.map(() => ({ serial: [], burst: [], appends: [] }));
  const task = () => undefined;
  const write = () => undefined;
  for (let round = 0; round < rounds + 1; round++) {
    for (const [b, { makeQueue }] of builds.entries()) {
      const queue = makeQueue();
      let t = performance.now();
      for (let i = 0; i < calls; i++) await queue.run('s', task);
      const serial = ((performance.now() - t) * 1e6) / calls;
      t = performance.now();
      for (let i = 0; i < calls / 16; i++) {
        const all = [];
        for (let j = 0; j < 16; j++) all.push(queue.run(`s${j % 4}`, task));
        await Promise.all(all);
      }
      const burst = ((performance.now() - t) * 1e6) / calls;
      t = performance.now();
      for (let i = 0; i < calls / 16; i++) {
        const all = [queue.run('s', task)];
        for (let j = 0; j < 15; j++) all.push(queue.append('s', ['x'], {}, write));
        await Promise.all(all);
      }
      const appends = ((performance.now() - t) * 1e6) / calls;
      if (round === 0) continue; // warm-up
      walls[b].serial.push(serial);
      walls[b].burst.push(burst);
      walls[b].appends.push(appends);
    }
  }
  const median = (xs) => [...xs].sort((a, c) => a - c)[Math.floor(xs.length / 2)].toFixed(0);
  console.log(`the queue alone: ns per call, median of ${rounds} alternating rounds of ${calls} calls`);
  for (const [b, { dist }] of builds.entries()) {
    const w = walls[b];
    console.log(
      `  ${path.relative(process.cwd(), dist) || dist}: run awaited ${median(w.serial)}, ` +
        `run in bursts of 16 ${median(w.burst)}, a run and 15 joined appends ${median(w.appends)}`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
