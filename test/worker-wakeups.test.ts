import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import type { SessionInboxStore } from '../src/session/session-inbox.js';
import type { SessionStore } from '../src/session/session-store.js';
import { createSessionClient } from '../src/workers/session-client.js';
import { startWorker } from '../src/workers/session-worker.js';
import { disposablePostgresStore } from './support/postgres.js';
import { waitingTurn } from './support/waiting-tool.js';
import { closedAfterWorkerTests } from './support/worker-tests.js';

// Polling every 10 s: what happens within a few seconds happened through the store's wakeups.
const SLOW_POLL_MS = 10_000;
const { servers, workers, cleanups } = closedAfterWorkerTests();

const stores: [string, () => Promise<SessionStore>, boolean][] = [
  ['MemorySessionStore', async () => new MemorySessionStore(), false],
  ['PostgresSessionStore', async () => disposablePostgresStore('wake', cleanups), true],
];

/**
 * Settles once a worker on `store` has made its first claim. startWorker claims only once its
 * wakeups are on, so a post after this is heard (a sleep instead raced the LISTEN on a loaded machine).
 */
function firstClaim(store: SessionStore): Promise<void> {
  const inbox = store as SessionStore & Required<SessionInboxStore>;
  const claim = inbox.claimSessions.bind(inbox);
  return new Promise((resolve) => {
    inbox.claimSessions = async (request) => {
      const leases = await claim(request);
      resolve();
      return leases;
    };
  });
}

describe.each(stores)('wakeups on %s', (_name, makeStore, wakesClients) => {
  it('a worker claims a posted session and an interrupt reaches the running turn without waiting for a poll', async () => {
    const { server, tool: waitLong, started } = await waitingTurn();
    servers.push(server);
    const store = await makeStore();
    const claimed = firstClaim(store);
    const worker = startWorker({
      store,
      agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
      pollMs: SLOW_POLL_MS,
    });
    workers.push(worker);
    // The client polls fast on the memory store (it has no save wakeups), slowly on PostgreSQL.
    const client = createSessionClient({ store, pollMs: wakesClients ? SLOW_POLL_MS : 20 });
    await claimed; // the worker has looked once, with its wakeups on: the post below is heard
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

  it('a post heard while the worker is claiming is claimed at once, not at the next poll', async () => {
    // Both sessions run a tool that waits until interrupted, so no finished session wakes the worker.
    const { server, tool: waitLong } = await waitingTurn();
    servers.push(server);
    const store = (await makeStore()) as SessionStore & Required<SessionInboxStore>;
    const client = createSessionClient({ store, pollMs: wakesClients ? SLOW_POLL_MS : 20 });
    // The second post lands just after the first claim has looked, and its wakeup is heard before that
    // claim returns: the worker must look again instead of sleeping until its next poll.
    const heard = new Set<string | undefined>();
    await store.watchInbox((id) => heard.add(id));
    const claim = store.claimSessions.bind(store);
    let first = true;
    store.claimSessions = async (request) => {
      const leases = await claim(request);
      if (first && leases.length > 0) {
        first = false;
        await client.send('late-2', 'wait');
        while (!heard.has('late-2') && !heard.has(undefined)) await new Promise((r) => setTimeout(r, 5));
      }
      return leases;
    };
    const looked = firstClaim(store);
    const claimed = new Map<string, number>();
    const worker = startWorker({
      store,
      concurrency: 2,
      agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
      pollMs: SLOW_POLL_MS,
      onSession: (e) => {
        if (e.phase === 'claimed') claimed.set(e.sessionId, Date.now());
      },
    });
    workers.push(worker);
    await looked;
    const t0 = Date.now();
    await client.send('late-1', 'wait');
    while (!claimed.has('late-2') && Date.now() - t0 < SLOW_POLL_MS * 1.5)
      await new Promise((r) => setTimeout(r, 10));
    expect(claimed.has('late-1')).toBe(true);
    expect(claimed.get('late-2')! - t0).toBeLessThan(SLOW_POLL_MS / 2);
    for (const id of ['late-1', 'late-2']) {
      await client.interrupt(id);
      await client.waitFor(id, { states: ['Interrupted'], timeoutMs: 20_000 });
    }
  });

  it('an interrupt posted while the worker reads the inbox for another post still stops the turn at once', async () => {
    const { server, tool: waitLong, started, stoppedAt } = await waitingTurn();
    servers.push(server);
    const store = (await makeStore()) as SessionStore & Required<SessionInboxStore>;
    const client = createSessionClient({ store, pollMs: wakesClients ? SLOW_POLL_MS : 20 });
    const heard = new Set<string | undefined>();
    await store.watchInbox((id) => heard.add(id));
    // Armed once the turn runs: the read that a second message's wakeup starts returns what it saw,
    // and the interrupt is posted (and its wakeup heard) while that read is under way.
    let armed = false;
    const read = store.readInbox.bind(store);
    store.readInbox = async (id) => {
      const items = await read(id);
      if (armed) {
        armed = false;
        heard.clear();
        await client.interrupt(id);
        while (!heard.has(id) && !heard.has(undefined)) await new Promise((r) => setTimeout(r, 5));
      }
      return items;
    };
    const looked = firstClaim(store);
    workers.push(
      startWorker({
        store,
        agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
        pollMs: SLOW_POLL_MS,
      }),
    );
    await looked;
    await client.send('busy-1', 'wait');
    const t0 = Date.now();
    while (started() === 0 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 10));
    expect(started()).toBe(1);
    armed = true;
    const t1 = Date.now();
    await client.send('busy-1', 'and another thing');
    while (stoppedAt() === 0 && Date.now() - t1 < SLOW_POLL_MS * 1.5)
      await new Promise((r) => setTimeout(r, 10));
    expect(stoppedAt() - t1).toBeLessThan(SLOW_POLL_MS / 2);
    expect(stoppedAt()).toBeGreaterThan(0);
    await client.waitFor('busy-1', { timeoutMs: 20_000 });
  });

  it('an interrupt posted right after the message stops the turn it starts without waiting for a poll', async () => {
    const { server, tool: waitLong, started, stoppedAt } = await waitingTurn();
    servers.push(server);
    const store = await makeStore();
    const client = createSessionClient({ store, pollMs: wakesClients ? SLOW_POLL_MS : 20 });
    // Both items are in the inbox before a worker looks: it reads them together.
    const t0 = Date.now();
    await client.send('early-1', 'wait');
    await client.interrupt('early-1');
    workers.push(
      startWorker({
        store,
        agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
        pollMs: SLOW_POLL_MS,
      }),
    );
    const view = await client.waitFor('early-1', { states: ['Interrupted'], timeoutMs: 20_000 });
    expect(view.lastResult.terminateReason).toBe('interrupted');
    expect(Date.now() - t0).toBeLessThan(SLOW_POLL_MS / 2);
    // The turn was stopped, whether or not its tool had started yet.
    if (started() > 0) expect(stoppedAt()).toBeGreaterThan(0);
  });

  it('a post made while the worker is still starting its wakeups is claimed without waiting for a poll', async () => {
    const { server, tool: waitLong, started } = await waitingTurn();
    servers.push(server);
    const store = (await makeStore()) as SessionStore & Required<SessionInboxStore>;
    const client = createSessionClient({ store, pollMs: wakesClients ? SLOW_POLL_MS : 20 });
    // The worker's LISTEN starts late (a loaded machine): the post lands before it is on.
    let listen!: () => void;
    const listening = new Promise<void>((resolve) => (listen = resolve));
    const watch = store.watchInbox.bind(store);
    store.watchInbox = async (listener) => {
      await listening;
      return watch(listener);
    };
    const looked = firstClaim(store);
    workers.push(
      startWorker({
        store,
        agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
        pollMs: SLOW_POLL_MS,
      }),
    );
    // A worker that claims before its wakeups are on (the race this test is about) has looked by
    // now; one that waits for them has not, and does not until they are.
    await Promise.race([looked, new Promise((r) => setTimeout(r, 200))]);
    const t0 = Date.now();
    await client.send('starting-1', 'wait');
    listen();
    while (started() === 0 && Date.now() - t0 < SLOW_POLL_MS * 1.5)
      await new Promise((r) => setTimeout(r, 10));
    expect(started()).toBe(1);
    expect(Date.now() - t0).toBeLessThan(SLOW_POLL_MS / 2);
    await client.interrupt('starting-1');
    await client.waitFor('starting-1', { states: ['Interrupted'], timeoutMs: 20_000 });
  });
});
