import { TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { FileSessionStore, MemorySessionStore } from '../src/index.js';
import { TranscriptFeed } from '../src/server/transcript-feed.js';
import { hasInbox } from '../src/session/session-inbox.js';
import { config, hook, NotingStore, push, storePairs } from './support/a2a-push.js';
import { a2aServer, drain, sdkClient, tempDir, textMessage } from './support/a2a-server.js';
import { waitUntil } from './support/wait-until.js';
import { gateScenario, gateTool } from './support/waiting-tool.js';

// A session has one writer: a push config set on a server that does not carry the task travels
// through the session's inbox and is written by the carrier (or, when nobody carries the session,
// under a lease of the setter's own), so the task's end always goes out with the agent's last append.

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
      await waitUntil(() => listener.bodies.some((b) => /COMPLETED|"completed"/.test(b)));
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
    await waitUntil(async () => (await holder.readInbox(waiting.contextId)).some((i) => i.kind === 'event'));
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
