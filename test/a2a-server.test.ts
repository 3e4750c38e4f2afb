import { createServer, type IncomingMessage } from 'node:http';
import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/index.js';
import {
  a2aServer,
  drain,
  kindOf,
  sdkClient,
  tempDir,
  textMessage,
  type Version,
} from './support/a2a-server.js';
import { deferred } from './support/harness.js';
import { chargeTool } from './support/recording-tools.js';
import { gateScenario, gateTool } from './support/waiting-tool.js';

const S = TaskState;

/** A file store whose lease releases wait for `hold` while it is set: a task slow to be let go. */
class SlowReleaseStore extends FileSessionStore {
  hold: Promise<void> | undefined;
  releases = 0;
  override async releaseLease(lease: Parameters<FileSessionStore['releaseLease']>[0]): Promise<void> {
    await this.hold;
    this.releases++;
    return super.releaseLease(lease);
  }
}

const textOf = (message: { parts: { content?: { $case: string; value: unknown } }[] } | undefined) =>
  (message?.parts ?? [])
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value as string] : []))
    .join('');

describe.each(['1.0', '0.3'] as Version[])('A2A %s through the SDK client', (version) => {
  it('serves the card: name, skills, streaming, the interfaces of both versions', async () => {
    const { url } = await a2aServer(
      { turns: [] },
      {
        card: {
          name: 'helper',
          description: 'helps',
          skills: [{ id: 'sum', name: 'Sum', description: 'adds' }],
        },
      },
    );
    const client = await sdkClient(url, version);
    const card = await client.getAgentCard();
    expect(card.name).toBe('helper');
    expect(card.description).toBe('helps');
    expect(card.skills.map((s) => s.id)).toEqual(['sum']);
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.capabilities?.pushNotifications).toBeFalsy();
    const raw = await (
      await fetch(
        `${url}/.well-known/agent-card.json`,
        version === '1.0' ? { headers: { 'A2A-Version': '1.0' } } : {},
      )
    ).json();
    if (version === '1.0') {
      expect(raw.supportedInterfaces.map((i: { protocolVersion: string }) => i.protocolVersion)).toEqual([
        '1.0',
        '0.3',
      ]);
    } else {
      expect(raw).toMatchObject({
        protocolVersion: '0.3.0',
        url: `${url}/a2a`,
        preferredTransport: 'JSONRPC',
      });
    }
  });

  it('send answers a completed task; get and the context continue it', async () => {
    const { url, store } = await a2aServer({
      turns: [{ content: 'hello there' }, { content: 'second answer' }],
    });
    const client = await sdkClient(url, version);
    const task = await client.sendMessage(textMessage('hi'));
    if (!('status' in task)) throw new Error('expected a task');
    expect(task.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message)).toBe('hello there');
    expect(task.artifacts.map((a) => textOf(a))).toEqual(['hello there']);
    const got = await client.getTask({ tenant: '', id: task.id });
    expect(got.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(got.history.map((m) => textOf(m))).toEqual(['hi', 'hello there']);
    // the context is the session: a second task in it sees the conversation
    const next = await client.sendMessage(textMessage('more', { contextId: task.contextId }));
    if (!('status' in next)) throw new Error('expected a task');
    expect(next.id).not.toBe(task.id);
    expect(textOf(next.status?.message)).toBe('second answer');
    const record = await store.load(task.contextId);
    expect(record?.turns).toBe(2);
    if (version === '1.0') {
      const listed = await client.listTasks({
        tenant: '',
        contextId: task.contextId,
        status: S.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      expect(listed.tasks.map((t) => t.id).sort()).toEqual([task.id, next.id].sort());
    }
  });

  it('stream: the task, working, the answer in pieces then whole, completed', async () => {
    const { url } = await a2aServer({ turns: [{ content: 'streamed answer here' }] });
    const client = await sdkClient(url, version);
    const events = await drain(client.sendMessageStream(textMessage('hi')));
    const kinds = events.map(kindOf);
    expect(kinds[0]).toBe('task');
    expect(kinds[1]).toBe(`status:${S.TASK_STATE_WORKING}`);
    expect(kinds.at(-1)).toBe(`status:${S.TASK_STATE_COMPLETED}`);
    const artifacts = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
    const pieces = artifacts.filter((a) => a.append).map((a) => textOf(a.artifact));
    expect(pieces.join('')).toBe('streamed answer here');
    expect(artifacts.filter((a) => !a.append).map((a) => textOf(a.artifact))).toEqual([
      'streamed answer here',
    ]);
  });

  it('cancel interrupts the turn: the tool stops, the task is canceled', async () => {
    const { tool, started, aborted } = gateTool();
    const { url, store } = await a2aServer(gateScenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
    });
    const client = await sdkClient(url, version);
    const stream = client.sendMessageStream(textMessage('go'));
    const first = await stream.next();
    const taskId =
      (first.value as StreamResponse).payload?.$case === 'task'
        ? (first.value as { payload: { value: { id: string } } }).payload.value.id
        : '';
    const rest = drain(stream);
    await started.promise;
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(S.TASK_STATE_CANCELED);
    await aborted.promise;
    expect((await rest).map(kindOf).at(-1)).toBe(`status:${S.TASK_STATE_CANCELED}`);
    const record = await store.load(canceled.contextId);
    expect(record?.state).toBe('Interrupted');
    // a canceled task cannot be canceled again
    await expect(client.cancelTask({ tenant: '', id: taskId, metadata: undefined })).rejects.toThrow(
      /canceled/,
    );
  });

  it('subscribe after the connection dropped: the task replayed from the transcript, then live to the end', async () => {
    const { tool, started, release } = gateTool();
    const { url } = await a2aServer(gateScenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
    });
    const client = await sdkClient(url, version);
    const abort = new AbortController();
    const stream = client.sendMessageStream(textMessage('go'), { signal: abort.signal });
    const first = await stream.next();
    const taskId = (first.value as { payload: { value: { id: string } } }).payload.value.id;
    await started.promise;
    abort.abort();
    await stream.return(undefined).catch(() => {});
    const again = client.resubscribeTask({ tenant: '', id: taskId });
    const head = await again.next();
    expect(kindOf(head.value as StreamResponse)).toBe('task');
    release.resolve('waited');
    const events = [head.value as StreamResponse, ...(await drain(again))];
    const kinds = events.map(kindOf);
    expect(kinds.filter((k) => k === `status:${S.TASK_STATE_WORKING}`).length).toBeGreaterThanOrEqual(1);
    expect(kinds.at(-1)).toBe(`status:${S.TASK_STATE_COMPLETED}`);
    const final = events.at(-1)!.payload!.value as { status?: { message?: Parameters<typeof textOf>[0] } };
    expect(textOf(final.status?.message)).toBe('It is done.');
  });

  it('push notifications go to a listener on 127.0.0.1 for every kept event', async () => {
    const received: { body: Record<string, unknown>; token?: string }[] = [];
    const done = deferred();
    const listener = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const parsed = JSON.parse(body) as Record<string, unknown>;
        received.push({ body: parsed, token: req.headers['x-a2a-notification-token'] as string | undefined });
        if (JSON.stringify(parsed).includes('COMPLETED') || JSON.stringify(parsed).includes('completed'))
          done.resolve();
        res.writeHead(200);
        res.end();
      });
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    try {
      const port = (listener.address() as { port: number }).port;
      const { url } = await a2aServer(
        { turns: [{ content: 'pushed answer' }] },
        { push: { allowedHosts: ['127.0.0.1'] } },
      );
      const client = await sdkClient(url, version);
      expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
      const task = await client.sendMessage(
        textMessage('hi', {}, [], {
          taskPushNotificationConfig: { url: `http://127.0.0.1:${port}/hook`, token: 'tok-1' },
        }),
      );
      await done.promise;
      expect(received.length).toBeGreaterThanOrEqual(2);
      expect(received.every((r) => r.token === 'tok-1')).toBe(true);
      expect(JSON.stringify(received.at(-1)!.body)).toContain(('id' in task ? task.id : '') as string);
      const configs = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: 'id' in task ? task.id : '',
        pageSize: 10,
        pageToken: '',
      });
      expect(configs.configs.map((c) => c.url)).toEqual([`http://127.0.0.1:${port}/hook`]);
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it('cancel of a task waiting for approval: the call never runs, the task is canceled, the session interrupted', async () => {
    const charged: string[] = [];
    const { url, store } = await a2aServer(
      { turns: [{ toolCalls: [{ name: 'charge', arguments: { amount: 7 } }] }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool(charged)] }) },
    );
    const client = await sdkClient(url, version);
    const waiting = await client.sendMessage(textMessage('charge me 7'));
    if (!('status' in waiting)) throw new Error('expected a task');
    expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    const canceled = await client.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
    expect(canceled.status?.state).toBe(S.TASK_STATE_CANCELED);
    expect((await store.load(waiting.contextId))?.state).toBe('Interrupted');
    expect(charged).toEqual([]);
  });

  it("a stream's input-required acted on at once: the answer and a cancel wait for the task to be let go", async () => {
    const charged: string[] = [];
    const store = new SlowReleaseStore({ dir: await tempDir() });
    const { url } = await a2aServer(
      {
        turns: [
          { toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] },
          { content: 'charged, all done' },
          { toolCalls: [{ name: 'charge', arguments: { amount: 9 } }] },
        ],
      },
      {
        store,
        agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool(charged)] }),
      },
    );
    const client = await sdkClient(url, version);
    const letGo = deferred<void>();
    store.hold = letGo.promise;
    const events = await drain(client.sendMessageStream(textMessage('charge me 5')));
    const last = events.at(-1)?.payload;
    if (last?.$case !== 'statusUpdate') throw new Error('expected a status update last');
    expect(last.value.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    // The stream ended with the task's last event; its session is not let go yet.
    expect(store.releases).toBe(0);
    const { taskId, contextId } = last.value;
    let answered = false;
    const answer = client
      .sendMessage(textMessage('', { taskId, contextId }, [{ approved: true }]))
      .finally(() => {
        answered = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered).toBe(false);
    store.hold = undefined;
    letGo.resolve();
    const done = await answer;
    if (!('status' in done)) throw new Error('expected a task');
    expect(done.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(charged).toEqual(['charge 5']);

    // A cancel right after the stream's end: the task is canceled at rest, and its call never runs.
    const again = deferred<void>();
    store.hold = again.promise;
    const second = await drain(client.sendMessageStream(textMessage('charge me 9', { contextId })));
    const waiting = second.at(-1)?.payload;
    if (waiting?.$case !== 'statusUpdate') throw new Error('expected a status update last');
    expect(waiting.value.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    const cancel = client.cancelTask({ tenant: '', id: waiting.value.taskId, metadata: undefined });
    await new Promise((resolve) => setTimeout(resolve, 100));
    store.hold = undefined;
    again.resolve();
    expect((await cancel).status?.state).toBe(S.TASK_STATE_CANCELED);
    expect((await store.load(contextId))?.state).toBe('Interrupted');
    expect(charged).toEqual(['charge 5']);
  });

  it('approval: input-required with a data part per call, answered by the next message, then completed', async () => {
    const charged: string[] = [];
    const { url, store } = await a2aServer(
      {
        turns: [
          { toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] },
          { content: 'charged, all done' },
          { toolCalls: [{ name: 'charge', arguments: { amount: 9 } }] },
          { content: 'not charged then' },
        ],
      },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [chargeTool(charged)] }) },
    );
    const client = await sdkClient(url, version);
    const waiting = await client.sendMessage(textMessage('charge me 5'));
    if (!('status' in waiting)) throw new Error('expected a task');
    expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    const data = waiting.status!.message!.parts.flatMap((p) =>
      p.content?.$case === 'data' ? [p.content.value] : [],
    );
    expect(data).toEqual([
      expect.objectContaining({ type: 'approval_request', toolName: 'charge', args: { amount: 5 } }),
    ]);
    expect((await store.load(waiting.contextId))?.state).toBe('WaitingApproval');
    expect(charged).toEqual([]);
    const toolCallId = (data[0] as { toolCallId: string }).toolCallId;
    const done = await client.sendMessage(
      textMessage('', { taskId: waiting.id, contextId: waiting.contextId }, [{ toolCallId, approved: true }]),
    );
    if (!('status' in done)) throw new Error('expected a task');
    expect(done.id).toBe(waiting.id);
    expect(done.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(textOf(done.status?.message)).toBe('charged, all done');
    expect(charged).toEqual(['charge 5']);

    // rejected with a reason: the call does not run, the model hears the reason
    const second = await client.sendMessage(textMessage('charge me 9', { contextId: waiting.contextId }));
    if (!('status' in second)) throw new Error('expected a task');
    expect(second.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    const rejected = await client.sendMessage(
      textMessage('', { taskId: second.id }, [{ approved: false, reason: 'too much' }]),
    );
    if (!('status' in rejected)) throw new Error('expected a task');
    expect(rejected.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(charged).toEqual(['charge 5']);
    const { entries } = await store.readTranscript(waiting.contextId);
    expect(JSON.stringify(entries)).toContain('too much');
  });
});
