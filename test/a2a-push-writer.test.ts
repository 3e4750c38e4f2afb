import { createServer, type Server } from 'node:http';
import { TaskState } from '@a2a-js/sdk';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FileSessionStore, MemorySessionStore, type SessionStore } from '../src/index.js';
import { PostgresSessionStore } from '../src/postgres/postgres-session-store.js';
import { TranscriptFeed } from '../src/server/transcript-feed.js';
import { hasInbox } from '../src/session/session-inbox.js';
import { a2aServer, drain, sdkClient, tempDir, textMessage } from './support/a2a-server.js';
import { dropSchema, freshSchema, postgresStore, postgresUrl } from './support/postgres.js';
import { gateScenario, gateTool } from './support/waiting-tool.js';

// A session has one writer: a push config set on a server that does not carry the task travels
// through the session's inbox and is written by the carrier (or, when nobody carries the session,
// under a lease of the setter's own), so the task's end always goes out with the agent's last append.

/** A file store that notes the sessions it appends to and the leases it takes. */
class NotingStore extends FileSessionStore {
  readonly appendedTo: string[] = [];
  readonly leased: string[] = [];
  override appendTranscript(...args: Parameters<FileSessionStore['appendTranscript']>) {
    this.appendedTo.push(args[0]);
    return super.appendTranscript(...args);
  }
  override acquireLease(...args: Parameters<FileSessionStore['acquireLease']>) {
    this.leased.push(args[0]);
    return super.acquireLease(...args);
  }
}

const hooks: Server[] = [];
afterEach(async () => {
  await Promise.all(hooks.splice(0).map((h) => new Promise((resolve) => h.close(resolve))));
});

/** A listener on 127.0.0.1 noting the bodies posted to it; its URL. */
async function hook(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      bodies.push(body);
      res.end();
    });
  });
  hooks.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies };
}

/** Waits (on the condition, up to 15 s) until `ok` holds. */
const until = (ok: () => boolean | Promise<boolean>) =>
  vi.waitFor(
    async () => {
      if (!(await ok())) throw new Error('not yet');
    },
    { timeout: 15_000, interval: 20 },
  );

const push = { allowedHosts: ['127.0.0.1'] };
const config = (taskId: string, url: string) => ({
  tenant: '',
  taskId,
  id: '',
  url,
  token: 'tok',
  authentication: undefined,
});

/** A PostgreSQL store that notes the sessions it appends to. */
class NotingPostgresStore extends PostgresSessionStore {
  readonly appendedTo: string[] = [];
  override appendTranscript(...args: Parameters<PostgresSessionStore['appendTranscript']>) {
    this.appendedTo.push(args[0]);
    return super.appendTranscript(...args);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanups) await step();
});

/** Two stores on one place: the carrier's, and the setter's (noting its appends). */
const storePairs: [
  string,
  (dir: string) => { carrier?: SessionStore; setter: SessionStore & { appendedTo: string[] } },
][] = [
  ['a file store', (dir) => ({ setter: new NotingStore({ dir }) })],
  [
    'PostgreSQL',
    () => {
      const schema = freshSchema('a2a_push');
      const carrier = postgresStore(schema);
      const setter = new NotingPostgresStore({ connectionString: postgresUrl(), max: 4 }, { schema });
      cleanups.push(async () => {
        await Promise.all([carrier.close(), setter.close()]);
        await dropSchema(schema);
      });
      return { carrier, setter };
    },
  ],
];

describe.each(storePairs)(
  'push configs set on a server that does not carry the task, on %s',
  (_name, stores) => {
    it('are written by the carrier mid-turn (the setter writes nothing), and reach the rest of its events', async () => {
      const { tool, started, release } = gateTool();
      const dir = await tempDir();
      const { carrier, setter: other } = stores(dir);
      const { url, store: fileStore } = await a2aServer(gateScenario, {
        agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
        push,
        dir,
        ...(carrier ? { store: carrier } : {}),
      });
      const store = carrier ?? fileStore;
      if (!hasInbox(store)) throw new Error('a store with inboxes');
      const second = await a2aServer({ turns: [] }, { dir, store: other, push, pollMs: 20 });
      const listener = await hook();
      const stream = (await sdkClient(url, '1.0')).sendMessageStream(textMessage('go'));
      const head = (await stream.next()).value as { payload: { value: { id: string; contextId: string } } };
      const { id: taskId, contextId } = head.payload.value;
      const rest = drain(stream);
      await started.promise;
      const client = await sdkClient(second.url, '1.0');
      const set = await client.createTaskPushNotificationConfig(config(taskId, listener.url));
      // Answered once it is in the transcript: readable from any process at once.
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId, id: set.id });
      expect(got.url).toBe(listener.url);
      expect(other.appendedTo).not.toContain(contextId);
      release.resolve('waited');
      await rest;
      await until(() => listener.bodies.some((b) => /COMPLETED|"completed"/.test(b)));
      expect(listener.bodies.some((b) => b.includes('It is done.') && /artifact/i.test(b))).toBe(true);
      const { entries } = await store.readTranscript(contextId);
      expect(entries.filter((e) => e.kind === 'event' && e.event === 'a2a_push')).toHaveLength(1);
      // The task's end went out with the agent's last append: the final status is the last entry.
      expect(entries.at(-1)).toMatchObject({ kind: 'event', event: 'a2a_status' });
      expect(await store.readInbox(contextId)).toEqual([]);
    });
  },
);

describe('push configs set on a server that does not carry the task', () => {
  it('while no turn runs are written by the setter under the session lease; one whose carrier let go unread is written by the setter', async () => {
    const dir = await tempDir();
    const { url } = await a2aServer({ turns: [{ content: 'Four.' }] }, { dir, push });
    const other = new NotingStore({ dir });
    const second = await a2aServer({ turns: [] }, { dir, store: other, push, pollMs: 20 });
    const waiting = await (await sdkClient(url, '1.0')).sendMessage(textMessage('2 + 2?'));
    if (!('status' in waiting)) throw new Error('expected a task');
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const client = await sdkClient(second.url, '1.0');
    const listener = await hook();
    await client.createTaskPushNotificationConfig(config(waiting.id, listener.url));
    expect(other.leased).toContain(waiting.contextId);

    // A holder that lets the session go without reading its inbox: the post is written by the setter.
    const holder = new FileSessionStore({ dir });
    const lease = await holder.acquireLease(waiting.contextId, { owner: 'holder', leaseMs: 60_000 });
    const setting = client.createTaskPushNotificationConfig(config(waiting.id, `${listener.url}/2`));
    await until(async () => (await holder.readInbox(waiting.contextId)).some((i) => i.kind === 'event'));
    await holder.releaseLease(lease);
    await setting;
    const { configs } = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: waiting.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(configs.map((c) => c.url).sort()).toEqual([listener.url, `${listener.url}/2`]);
    expect(await holder.readInbox(waiting.contextId)).toEqual([]);
  });
});

describe('TranscriptFeed', () => {
  it("an entry of the server's own leaves the end held for the agent's next append behind it", async () => {
    const store = new MemorySessionStore();
    const feed = new TranscriptFeed(store, 's', 0);
    const event = (name: string) => ({ kind: 'event' as const, event: name, data: {} });
    const end = feed.hold([event('end')], { after: true });
    await feed.append([event('push')]);
    await feed.store.appendTranscript('s', [event('rest point')]);
    await end;
    const { entries } = await store.readTranscript('s');
    expect(entries.map((e) => (e.kind === 'event' ? e.event : e.kind))).toEqual([
      'push',
      'rest point',
      'end',
    ]);
  });
});
