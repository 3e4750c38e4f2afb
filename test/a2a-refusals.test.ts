import { describe, expect, it } from 'vitest';
import { a2aServer } from './support/a2a-server.js';
import { chargeTool } from './support/recording-tools.js';

/** One JSON-RPC call over plain HTTP (so that malformed bodies can be sent too). */
async function rpc(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  json: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };
}> {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

const V1 = { 'A2A-Version': '1.0' };

function send(text: string, extra: Record<string, unknown> = {}, method = 'SendMessage') {
  return {
    jsonrpc: '2.0',
    id: 7,
    method,
    params: {
      message: {
        messageId: `m-${Math.random()}`,
        role: method === 'SendMessage' ? 'ROLE_USER' : 'user',
        parts: [method === 'SendMessage' ? { text } : { kind: 'text', text }],
        ...extra,
      },
    },
  };
}

const charge = chargeTool();

describe('A2A bad input: a JSON-RPC error with the right code, the session unchanged', () => {
  it('a malformed body, an unknown method, a wrong version', async () => {
    const { url } = await a2aServer({ turns: [] });
    const parse = await rpc(url, '{"jsonrpc": "2.0", "id": 1, "method": ', V1);
    expect(parse.json.error?.code).toBe(-32700);
    const unknown = await rpc(url, { jsonrpc: '2.0', id: 2, method: 'tasks/explode', params: {} }, V1);
    expect(unknown.json.error?.code).toBe(-32601);
    expect(unknown.json.id).toBe(2);
    const oldUnknown = await rpc(url, { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: {} });
    expect(oldUnknown.json.error?.code).toBe(-32601); // a 1.0 name without the 1.0 header
    const notRpc = await rpc(url, { hello: 'world' }, V1);
    expect(notRpc.json.error?.code).toBe(-32600);
    const version = await rpc(url, send('hi'), { 'A2A-Version': '2.7' });
    expect(version.json.error?.code).toBe(-32009);
  });

  it('a message over the size limit is refused while it arrives (10 MB against 1 MiB)', async () => {
    const { url, store } = await a2aServer({ turns: [] });
    const big = send('x'.repeat(10 * 1024 * 1024), { contextId: 'ctx-big' });
    const res = await rpc(url, big, V1);
    expect(res.status).toBe(413);
    expect(res.json.error?.code).toBe(-32600);
    expect(res.json.error?.message).toMatch(/larger than the limit of 1048576 bytes/);
    expect(await store.load('ctx-big')).toBeUndefined();
    expect((await store.readTranscript('ctx-big')).entries).toEqual([]);
  });

  it("another caller's task is not found; an answer to a task that is not waiting is refused", async () => {
    const { url, store } = await a2aServer(
      { turns: [{ content: 'done for alice' }] },
      { auth: (req) => (req.headers['x-user'] as string | undefined) || undefined },
    );
    const alice = { ...V1, 'x-user': 'alice' };
    const bob = { ...V1, 'x-user': 'bob' };
    const sent = await rpc(url, send('hi', { contextId: 'ctx-alice' }), alice);
    const task = sent.json.result?.task as { id: string; status: { state: string } };
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const before = (await store.readTranscript('ctx-alice')).entries.length;

    const get = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } }, bob);
    expect(get.json.error?.code).toBe(-32001);
    const answer = await rpc(url, send('yes', { contextId: 'ctx-alice', taskId: task.id }), bob);
    expect(answer.json.error?.code).toBe(-32001);
    const inContext = await rpc(url, send('hi', { contextId: 'ctx-alice' }), bob);
    expect(inContext.json.error?.code).toBe(-32001);
    const cancel = await rpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: task.id } },
      bob,
    );
    expect(cancel.json.error?.code).toBe(-32001);
    const unauthenticated = await rpc(url, send('hi'), V1);
    expect(unauthenticated.status).toBe(401);

    // alice answers her own completed task: it waits for nothing
    const late = await rpc(url, send('yes', { contextId: 'ctx-alice', taskId: task.id }), alice);
    expect(late.json.error?.code).toBe(-32004);
    expect(late.json.error?.message).toMatch(/is completed: it takes no message/);
    const cancelDone = await rpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: task.id } },
      alice,
    );
    expect(cancelDone.json.error?.code).toBe(-32002);
    expect((await store.readTranscript('ctx-alice')).entries.length).toBe(before);
  });

  it('an approval answer naming a call that is not waiting, a new message while one waits (0.3 names)', async () => {
    const { url, store } = await a2aServer(
      { turns: [{ toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] }] },
      { agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [charge] }) },
    );
    const sent = await rpc(url, send('charge', { contextId: 'ctx-pay', kind: 'message' }, 'message/send'));
    const task = sent.json.result as { id: string; status: { state: string } };
    expect(task.status.state).toBe('input-required');
    const before = await store.load('ctx-pay');
    const entries = (await store.readTranscript('ctx-pay')).entries.length;
    const wrong = await rpc(url, {
      jsonrpc: '2.0',
      id: 9,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: 'm-wrong',
          role: 'user',
          contextId: 'ctx-pay',
          taskId: task.id,
          parts: [{ kind: 'data', data: { toolCallId: 'call_nope', approved: true } }],
        },
      },
    });
    expect(wrong.json.error?.code).toBe(-32602);
    expect(wrong.json.error?.message).toMatch(/"call_nope" is not waiting for approval/);
    const fresh = await rpc(
      url,
      send('something else', { contextId: 'ctx-pay', kind: 'message' }, 'message/send'),
    );
    expect(fresh.json.error?.code).toBe(-32004);
    expect(fresh.json.error?.message).toMatch(/waits for input on task/);
    expect((await store.load('ctx-pay'))?.state).toBe('WaitingApproval');
    expect((await store.load('ctx-pay'))?.updatedAt).toBe(before?.updatedAt);
    expect((await store.readTranscript('ctx-pay')).entries.length).toBe(entries);
  });

  it('a push URL outside the allowed hosts, and push on a server without push', async () => {
    const { url, store } = await a2aServer(
      { turns: [{ content: 'ok' }] },
      { push: { allowedHosts: ['127.0.0.1'] } },
    );
    const sent = await rpc(url, send('hi', { contextId: 'ctx-push' }), V1);
    const task = sent.json.result?.task as { id: string };
    const entries = (await store.readTranscript('ctx-push')).entries.length;
    const outside = await rpc(
      url,
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'CreateTaskPushNotificationConfig',
        params: { taskId: task.id, url: 'http://169.254.169.254/latest/meta-data' },
      },
      V1,
    );
    expect(outside.json.error?.code).toBe(-32602);
    expect(outside.json.error?.message).toMatch(/host "169.254.169.254" is not an allowed host/);
    const withSend = await rpc(
      url,
      {
        ...send('hi again', { contextId: 'ctx-push' }),
        params: {
          ...send('hi again', { contextId: 'ctx-push' }).params,
          configuration: { taskPushNotificationConfig: { url: 'https://evil.example/hook' } },
        },
      },
      V1,
    );
    expect(withSend.json.error?.code).toBe(-32602);
    expect((await store.readTranscript('ctx-push')).entries.length).toBe(entries);

    const plain = await a2aServer({ turns: [{ content: 'ok' }] });
    const plainSent = await rpc(plain.url, send('hi', { contextId: 'ctx-p' }), V1);
    const plainTask = plainSent.json.result?.task as { id: string };
    const off = await rpc(
      plain.url,
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'CreateTaskPushNotificationConfig',
        params: { taskId: plainTask.id, url: 'http://127.0.0.1:1/x' },
      },
      V1,
    );
    expect(off.json.error?.code).toBe(-32003);
  });
});
