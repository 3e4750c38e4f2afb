import { afterAll, describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import type { SessionStore } from '../src/session/session-store.js';
import type { ScriptedServer } from '../src/testing/index.js';
import { createSessionClient } from '../src/workers/session-client.js';
import { startWorker, type Worker } from '../src/workers/session-worker.js';
import { dropSchema, freshSchema, postgresStore } from './support/postgres.js';
import { waitingTurn } from './support/waiting-tool.js';

// Polling every 10 s: what happens within a few seconds happened through the store's wakeups.
const SLOW_POLL_MS = 10_000;
const servers: ScriptedServer[] = [];
const workers: Worker[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(servers.map((s) => s.close()));
  for (const step of cleanups) await step();
});

const stores: [string, () => Promise<SessionStore>, boolean][] = [
  ['MemorySessionStore', async () => new MemorySessionStore(), false],
  [
    'PostgresSessionStore',
    async () => {
      const schema = freshSchema('wake');
      const store = postgresStore(schema);
      cleanups.push(async () => {
        await store.close();
        await dropSchema(schema);
      });
      return store;
    },
    true,
  ],
];

describe.each(stores)('wakeups on %s', (_name, makeStore, wakesClients) => {
  it('a worker claims a posted session and an interrupt reaches the running turn without waiting for a poll', async () => {
    const { server, tool: waitLong, started } = await waitingTurn();
    servers.push(server);
    const store = await makeStore();
    const worker = startWorker({
      store,
      agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
      pollMs: SLOW_POLL_MS,
    });
    workers.push(worker);
    // The client polls fast on the memory store (it has no save wakeups), slowly on PostgreSQL.
    const client = createSessionClient({ store, pollMs: wakesClients ? SLOW_POLL_MS : 20 });
    // Let the worker's LISTEN start before the post (a post before it would wait for the poll).
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await client.send('wake-1', 'wait');
    while (started() === 0 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 10));
    expect(started()).toBe(1);
    const t1 = Date.now();
    await client.interrupt('wake-1');
    const view = await client.waitFor('wake-1', { states: ['Interrupted'], timeoutMs: 20_000 });
    expect(view.lastResult.terminateReason).toBe('interrupted');
    expect(Date.now() - t1).toBeLessThan(SLOW_POLL_MS / 2);
  });
});
