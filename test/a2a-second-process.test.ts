import { createServer } from 'node:http';
import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../src/index.js';
import { a2aServer, drain, kindOf, sdkClient, textMessage } from './support/a2a-server.js';
import { deferred } from './support/harness.js';
import { secondServerProcess } from './support/second-server-process.js';
import { gateScenario, gateTool } from './support/waiting-tool.js';

// A second A2A server on the same file store, in its own process.
const second = secondServerProcess('a2a', { push: { allowedHosts: ['127.0.0.1'] } });

describe('two A2A server processes on one file store', () => {
  it('a task carried by the first is read and subscribed from the second, to its end', async () => {
    const { started, release, tool } = gateTool();
    const { url, dir, model } = await a2aServer(gateScenario, {
      agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
    });
    const otherUrl = await second.start(dir, model.url);
    {
      const first = await sdkClient(url, '1.0');
      const stream = first.sendMessageStream(textMessage('go'));
      const head = await stream.next();
      const taskId = (head.value as { payload: { value: { id: string } } }).payload.value.id;
      const rest = drain(stream);
      await started.promise;
      const client = await sdkClient(otherUrl, '0.3'); // the 0.3 names (tasks/get, tasks/resubscribe) here
      const got = await client.getTask({ tenant: '', id: taskId });
      expect(got.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const subscribed = client.resubscribeTask({ tenant: '', id: taskId });
      const subHead = await subscribed.next();
      expect(kindOf(subHead.value as StreamResponse)).toBe('task');
      release.resolve('waited');
      const events = await drain(subscribed);
      expect(events.map(kindOf).at(-1)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}`);
      const answer = events.flatMap((e) =>
        e.payload?.$case === 'artifactUpdate'
          ? e.payload.value.artifact!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
          : [],
      );
      expect(answer).toEqual(['It is done.']);
      expect((await rest).map(kindOf).at(-1)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}`);
    }
  });

  it('a cancel sent to the second reaches the task the first carries, through the session inbox', async () => {
    const { tool, started, aborted } = gateTool();
    const { url, dir, model } = await a2aServer(
      { turns: [{ toolCalls: [{ name: 'wait_for_it', arguments: {} }] }, { content: 'never' }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }) },
    );
    const otherUrl = await second.start(dir, model.url);
    const first = await sdkClient(url, '1.0');
    const stream = first.sendMessageStream(textMessage('go'));
    const head = await stream.next();
    const taskId = (head.value as { payload: { value: { id: string } } }).payload.value.id;
    const rest = drain(stream);
    await started.promise;
    const client = await sdkClient(otherUrl, '1.0');
    const cancelled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    await aborted.promise;
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await rest).map(kindOf).at(-1)).toBe(`status:${TaskState.TASK_STATE_CANCELED}`);
    expect((await client.getTask({ tenant: '', id: taskId })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
  });

  it('a push config set in the second mid-turn gets the rest of the events the first sends; seqs stay the store ones', async () => {
    const { started, release, tool } = gateTool();
    const received: string[] = [];
    const completed = deferred();
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push(body);
        if (/COMPLETED|"completed"/.test(body)) completed.resolve();
        res.writeHead(200);
        res.end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
      const { url, dir, model } = await a2aServer(gateScenario, {
        agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [tool] }),
        push: { allowedHosts: ['127.0.0.1'] },
      });
      const otherUrl = await second.start(dir, model.url);
      const first = await sdkClient(url, '1.0');
      const stream = first.sendMessageStream(textMessage('go'));
      const head = await stream.next();
      const taskId = (head.value as { payload: { value: { id: string } } }).payload.value.id;
      const contextId = (head.value as { payload: { value: { contextId: string } } }).payload.value.contextId;
      const rest = drain(stream);
      await started.promise;
      const client = await sdkClient(otherUrl, '1.0');
      await client.createTaskPushNotificationConfig({
        tenant: '',
        taskId,
        id: '',
        url: hookUrl,
        token: 'tok-2',
        authentication: undefined,
      });
      release.resolve('waited');
      await rest;
      await completed.promise;
      // The answer artifact, kept before the final status, went to the config set elsewhere too.
      expect(received.some((body) => body.includes('It is done.') && /artifact/i.test(body))).toBe(true);
      // One writer's count did not hide the other's entry: every seq once, in order.
      const { entries } = await new FileSessionStore({ dir }).readTranscript(contextId);
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
      expect(entries.some((e) => e.kind === 'event' && e.event === 'a2a_push')).toBe(true);
    } finally {
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });
});
