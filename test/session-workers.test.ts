import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FileSessionStore } from '../src/session/file-store/file-session-store.js';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import type { SessionStore } from '../src/session/session-store.js';
import { startScriptedServer } from '../src/testing/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { createSessionClient } from '../src/workers/session-client.js';
import { startWorker } from '../src/workers/session-worker.js';
import { assertToolCallsAnswered } from './support/harness.js';
import { disposablePostgresStore } from './support/postgres.js';
import { waitingTurn } from './support/waiting-tool.js';
import { closedAfterWorkerTests } from './support/worker-tests.js';

const { servers, workers, cleanups } = closedAfterWorkerTests();

/** Tools that count their runs per session (what the tools themselves saw). */
function countingTools(runs: Map<string, number>) {
  const count = (name: string, sessionId: string) =>
    runs.set(`${sessionId}/${name}`, (runs.get(`${sessionId}/${name}`) ?? 0) + 1);
  return [
    defineTool({
      name: 'lookup',
      description: 'reads',
      parameters: z.object({ q: z.string() }),
      execute: async ({ q }, ctx) => {
        count('lookup', ctx.sessionId);
        return `found ${q}`;
      },
    }),
    defineTool({
      name: 'deploy',
      description: 'changes the world',
      parameters: z.object({ env: z.string() }),
      needsApproval: true,
      execute: async ({ env }, ctx) => {
        count('deploy', ctx.sessionId);
        return `deployed to ${env}`;
      },
    }),
  ];
}

const stores: [string, () => Promise<SessionStore>][] = [
  ['MemorySessionStore', async () => new MemorySessionStore()],
  [
    'FileSessionStore',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-workers-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return new FileSessionStore({ dir, fsync: false });
    },
  ],
  ['PostgresSessionStore', async () => disposablePostgresStore('work', cleanups)],
];

describe.each(stores)('workers and inboxes on %s', (_name, makeStore) => {
  it('send creates the session; approvals answered twice apply once; the tool runs once; interrupts reach the turn', async () => {
    const server = await startScriptedServer({
      scenario: {
        turns: [
          {
            toolCalls: [
              { name: 'lookup', arguments: { q: 'build' } },
              { name: 'deploy', arguments: { env: 'prod' } },
            ],
          },
          { content: 'Deployed.' },
        ],
      },
    });
    servers.push(server);
    const store = await makeStore();
    const runs = new Map<string, number>();
    const agent = () => ({ baseURL: server.url, apiKey: 'k', tools: countingTools(runs) });
    // Two workers on one store: any of them may carry the session at any step.
    workers.push(startWorker({ store, agent, concurrency: 2, pollMs: 50, leaseMs: 2_000 }));
    workers.push(startWorker({ store, agent, concurrency: 2, pollMs: 50, leaseMs: 2_000 }));
    const client = createSessionClient({ store, pollMs: 20 });
    expect(await client.get('w-1')).toBeUndefined();

    await client.send('w-1', 'deploy the build');
    const waiting = await client.waitFor('w-1', { states: ['WaitingApproval'], timeoutMs: 20_000 });
    expect(waiting.pendingApprovals.map((p) => p.name)).toEqual(['deploy']);
    const id = waiting.pendingApprovals[0]!.toolCallId;
    // Two browsers answer at once: one answer is taken, the other is a no-op.
    const answers = await Promise.all([client.approve('w-1', id), client.approve('w-1', id)]);
    expect(answers.filter(Boolean)).toHaveLength(1);
    const done = await client.waitFor('w-1', { states: ['Completed'], timeoutMs: 20_000 });
    expect(done.lastResult.response).toBe('Deployed.');
    assertToolCallsAnswered(done.messages);
    expect(done.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'found build',
      'deployed to prod',
    ]);
    // Too late: the call is not pending any more.
    expect(await client.approve('w-1', id)).toBe(false);
    expect(await client.reject('w-1', id, 'no')).toBe(false);
    expect(Object.fromEntries(runs)).toEqual({ 'w-1/lookup': 1, 'w-1/deploy': 1 });

    // The transcript: consecutive seq, the user message tagged with the inbox item it came from.
    const { entries } = await store.readTranscript('w-1');
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    const user = entries.find((e) => e.kind === 'message' && e.message.role === 'user');
    expect(user && user.kind === 'message' && user.inbox).toBe(1);
    const approvals = entries.filter((e) => e.kind === 'event' && e.event === 'approval_resolved');
    expect(approvals).toHaveLength(1);
  });

  it('interrupt stops a running turn through the inbox', async () => {
    const { server, tool: waitLong, started } = await waitingTurn();
    servers.push(server);
    const store = await makeStore();
    workers.push(
      startWorker({
        store,
        agent: () => ({ baseURL: server.url, apiKey: 'k', tools: [waitLong] }),
        pollMs: 30,
      }),
    );
    const client = createSessionClient({ store, pollMs: 20 });
    await client.send('w-2', 'wait');
    while (started() === 0) await new Promise((r) => setTimeout(r, 10));
    await client.interrupt('w-2');
    const view = await client.waitFor('w-2', { states: ['Interrupted'], timeoutMs: 20_000 });
    expect(view.lastResult.terminateReason).toBe('interrupted');
    assertToolCallsAnswered(view.messages);
  });
});

describe('createSessionClient', () => {
  it('refuses a store without inboxes, saying which stores have them', () => {
    // A store of one's own that implements only the SessionStore interface.
    const memory = new MemorySessionStore();
    const store: SessionStore = {
      save: (input, options) => memory.save(input, options),
      load: (id) => memory.load(id),
      list: () => memory.list(),
      delete: (id) => memory.delete(id),
      appendTranscript: (id, entries, options) => memory.appendTranscript(id, entries, options),
      readTranscript: (id) => memory.readTranscript(id),
    };
    const stores =
      /PostgresSessionStore, a FileSessionStore for processes on one machine, or a MemorySessionStore/;
    expect(() => createSessionClient({ store })).toThrow(stores);
    expect(() => startWorker({ store, agent: () => ({}) })).toThrow(stores);
  });

  it('waitFor names the state it saw when it gives up', async () => {
    const client = createSessionClient({ store: new MemorySessionStore() });
    await client.send('nobody-works', 'hello');
    await expect(client.waitFor('nobody-works', { timeoutMs: 100 })).rejects.toThrow(
      'session "nobody-works" did not reach AwaitingInput or Completed or WaitingApproval or Interrupted or Error in time (it is not saved yet)',
    );
  });
});

describe('a session whose first save never landed', () => {
  it('is started again with its message, even when the new start reaches the transcript late', async () => {
    // A slow disk: appends land 100 ms after they are asked for.
    class SlowAppends extends MemorySessionStore {
      override async appendTranscript(...args: Parameters<MemorySessionStore['appendTranscript']>) {
        await new Promise((r) => setTimeout(r, 100));
        return super.appendTranscript(...args);
      }
    }
    const store = new SlowAppends();
    const server = await startScriptedServer({ scenario: { turns: [{ content: 'done' }] } });
    servers.push(server);
    // An owner applied inbox item 1 and died before the session's first save: its transcript holds the
    // start and the message, the store no record, the item is still open.
    const client = createSessionClient({ store, pollMs: 20 });
    const item = await client.send('lost-start', 'hello');
    await store.appendTranscript('lost-start', [
      { kind: 'event', event: 'session_started', data: {} },
      { kind: 'message', message: { role: 'user', content: 'hello' }, inbox: item.seq },
    ]);
    workers.push(startWorker({ store, agent: () => ({ baseURL: server.url, apiKey: 'k' }), pollMs: 50 }));
    const view = await client.waitFor('lost-start', { timeoutMs: 20_000 });
    expect(view.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(view.lastResult.response).toBe('done');
  });
});

describe("a client's look at a session (record and inbox) while a worker applies its answer", () => {
  it('never pairs the record from before the answer with the inbox from after it', async () => {
    const server = await startScriptedServer({
      scenario: {
        turns: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, { content: 'Deployed.' }],
      },
    });
    servers.push(server);
    const store = new MemorySessionStore();
    const runs = new Map<string, number>();
    workers.push(
      startWorker({
        store,
        agent: () => ({ baseURL: server.url, apiKey: 'k', tools: countingTools(runs) }),
        pollMs: 20,
      }),
    );
    // The client's inbox reads come 300 ms late (a pool opening a connection for the second of two
    // reads): the worker applies the answer, finishes the turn and completes the item meanwhile.
    let slowInbox = false;
    const clientStore = new Proxy(store, {
      get(target, prop) {
        if (prop === 'readInbox')
          return async (id: string) => {
            if (slowInbox) await new Promise((resolve) => setTimeout(resolve, 300));
            return target.readInbox(id);
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const client = createSessionClient({ store: clientStore, pollMs: 20 });
    await client.send('w-3', 'deploy the build');
    const waiting = await client.waitFor('w-3', { states: ['WaitingApproval'], timeoutMs: 20_000 });
    expect(await client.approve('w-3', waiting.pendingApprovals[0]!.toolCallId)).toBe(true);
    slowInbox = true;
    // Any resting state will do: before the fix this saw WaitingApproval (the record read first) with
    // an empty inbox (read after the worker completed the answer) and took it for the session's rest.
    const rested = await client.waitFor('w-3', { timeoutMs: 20_000 });
    expect(rested.state).toBe('Completed');
    expect(rested.lastResult.response).toBe('Deployed.');
    expect(runs.get('w-3/deploy')).toBe(1);
  });
});
