import { describe, expect, it } from 'vitest';
import { agUiServer, clientWith, runThrough } from './support/ag-ui-server.js';

/** A raw POST, for bodies no client would send. */
async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const input = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    threadId: 't1',
    runId: 'r1',
    messages: [{ id: 'u1', role: 'user', content: 'hi' }],
    ...extra,
  });

describe('AG-UI server refusals', () => {
  it('refuses malformed JSON, unknown fields and schema errors with a 400 naming the field', async () => {
    const { runs, store } = await agUiServer({ turns: [{ content: 'never' }] });
    const bad = await post(runs, '{"threadId": ');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('not valid JSON');
    const unknown = await post(runs, input({ sneaky: 1 }));
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('unknown field \\"sneaky\\"');
    const wrong = await post(
      runs,
      JSON.stringify({ threadId: 't1', runId: 'r1', messages: [{ id: 'u1', role: 'user' }] }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('RunAgentInput.messages.0');
    const noThread = await post(runs, JSON.stringify({ runId: 'r1', messages: [] }));
    expect(noThread.status).toBe(400);
    expect(noThread.text).toContain('RunAgentInput.threadId');
    expect(await store.list()).toEqual([]);
  });

  it('refuses a body over the limit with a 413 before reading it all', async () => {
    const { runs, store } = await agUiServer({ turns: [{ content: 'never' }] });
    const huge = input({ forwardedProps: { pad: 'x'.repeat(10 * 1024 * 1024) } });
    const res = await post(runs, huge);
    expect(res.status).toBe(413);
    expect(res.text).toContain('larger than the limit');
    expect(await store.list()).toEqual([]);
  });

  it('refuses a thread of another principal with a 403, and leaves it unchanged', async () => {
    const users: Record<string, string> = { 'Bearer alice': 'alice', 'Bearer bob': 'bob' };
    const { runs, store } = await agUiServer(
      { turns: [{ content: 'hello alice' }, { content: 'never' }] },
      { auth: (req) => users[req.headers.authorization ?? ''] },
    );
    const alice = clientWith(runs, 'thread-a', 'hi', { authorization: 'Bearer alice' });
    expect((await runThrough(alice)).error).toBeUndefined();
    const before = await store.readTranscript('thread-a');
    const bob = clientWith(runs, 'thread-a', 'let me in', { authorization: 'Bearer bob' });
    const { error } = await runThrough(bob);
    expect((error as { status?: number }).status).toBe(403);
    const anonymous = await post(runs, input({ threadId: 'thread-a' }));
    expect(anonymous.status).toBe(401);
    expect((await store.readTranscript('thread-a')).entries).toHaveLength(before.entries.length);
    expect((await store.load('thread-a'))?.meta).toMatchObject({ principal: 'alice' });
  });

  it('answers 404 for an unknown agent and for a cancel of a run that does not exist', async () => {
    const { url, runs } = await agUiServer({ turns: [{ content: 'never' }] });
    expect((await post(`${url}/agents/nobody/runs`, input())).status).toBe(404);
    expect((await post(`${url}/agents/default/threads/nope/runs/r9/cancel`, '{}')).status).toBe(404);
    expect((await fetch(runs)).status).toBe(405);
  });

  it('refuses a Host header that does not name this machine when there is no auth (DNS rebinding)', async () => {
    const { runs } = await agUiServer({ turns: [{ content: 'never' }] });
    const port = new URL(runs).port;
    const res = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/agents/default/runs',
            method: 'POST',
            headers: { host: `evil.example:${port}` },
          },
          (r) => resolve(r.statusCode ?? 0),
        );
        req.on('error', reject);
        req.end(input());
      });
    });
    expect(res).toBe(403);
  });

  it('refuses a history that contradicts the thread with RUN_ERROR naming the first differing message', async () => {
    const { runs, store } = await agUiServer({ turns: [{ content: 'first' }, { content: 'never' }] });
    const client = clientWith(runs, 'thread-h', 'one');
    expect((await runThrough(client)).error).toBeUndefined();
    const messages = async () =>
      (await store.readTranscript('thread-h')).entries.filter((e) => e.kind === 'message');
    const before = await messages();
    client.setMessages([
      { id: 'u-x', role: 'user', content: 'not what I said' },
      { id: 'u-y', role: 'user', content: 'two' },
    ]);
    const { events } = await runThrough(client);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'history_conflict' });
    expect(events.at(-1)!.message).toContain('"u-x"');
    expect(await messages()).toEqual(before);
  });

  it('refuses to listen beyond loopback without auth', async () => {
    const { startAgentServer } = await import('../src/server/index.js');
    const { MemorySessionStore } = await import('../src/index.js');
    await expect(
      startAgentServer({ agent: () => ({}), store: new MemorySessionStore(), host: '0.0.0.0' }),
    ).rejects.toThrow(/without auth/);
  });
});

describe('a client that never reads its stream', () => {
  it('is cut off once its buffer is full; the run goes on and the session completes', async () => {
    const long = 'x'.repeat(20_000);
    const { runs, store } = await agUiServer({ turns: [{ content: long }] }, { maxBufferedBytes: 1024 });
    const res = await fetch(runs, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: input({ threadId: 'slow-reader' }),
    });
    expect(res.status).toBe(200); // and the body is never read
    const until = Date.now() + 10_000;
    while ((await store.load('slow-reader'))?.state !== 'Completed' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await store.load('slow-reader'))?.state).toBe('Completed');
    const kept = (await store.readTranscript('slow-reader')).entries;
    expect(kept.some((e) => e.kind === 'event' && e.event === 'agui_run_ended')).toBe(true);
    await expect(res.text()).rejects.toThrow(); // the server cut the stream it could not deliver
  });
});
