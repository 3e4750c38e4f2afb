import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import { hasInbox } from '../src/session/session-inbox.js';
import type { SessionStore } from '../src/session/session-store.js';
import { startScriptedServer } from '../src/testing/index.js';
import { createSessionClient } from '../src/workers/session-client.js';
import { startWorker } from '../src/workers/session-worker.js';
import { disposablePostgresStore } from './support/postgres.js';
import { closedAfterWorkerTests } from './support/worker-tests.js';

const { servers, workers, cleanups } = closedAfterWorkerTests();

const stores: [string, () => SessionStore][] = [
  ['MemorySessionStore', () => new MemorySessionStore()],
  ['PostgresSessionStore', () => disposablePostgresStore('inbox_event', cleanups)],
];

describe.each(stores)('an `event` inbox item (an entry for the session writer) on %s', (_name, makeStore) => {
  it('is written to the transcript by the worker carrying the session, beside the turn it does not stop', async () => {
    const store = makeStore();
    if (!hasInbox(store)) throw new Error('a store with inboxes');
    const server = await startScriptedServer({ scenario: { turns: [{ content: 'done' }] } });
    servers.push(server);
    const client = createSessionClient({ store, pollMs: 20 });
    await client.send('s1', 'hello');
    await store.postInbox('s1', {
      kind: 'event',
      event: 'a2a_push',
      data: { taskId: 't', config: { id: 'c' } },
    });
    workers.push(startWorker({ store, agent: () => ({ baseURL: server.url, apiKey: 'k' }), pollMs: 20 }));
    const view = await client.waitFor('s1', { timeoutMs: 20_000 });
    expect(view.lastResult.response).toBe('done');
    const { entries } = await store.readTranscript('s1');
    expect(entries.filter((e) => e.kind === 'event' && e.event === 'a2a_push')).toEqual([
      expect.objectContaining({ data: { taskId: 't', config: { id: 'c' } } }),
    ]);
    expect(await store.readInbox('s1')).toEqual([]);
  });
});
