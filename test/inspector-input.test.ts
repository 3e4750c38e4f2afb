// Nothing a page can send crashes the inspector server or drives it: every WebSocket message and
// every HTTP request is answered (with an error when it cannot be carried out), never thrown on.
// Real HTTP and WebSockets on 127.0.0.1, a real agent on the scripted model server.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../src/index.js';
import { type InspectorServer, startInspectorServer } from '../src/inspector/inspector-server.js';
import type { ServerMessage } from '../src/inspector/protocol.js';
import { startScriptedServer } from '../src/testing/index.js';
import { connectPage, httpGet, type PageSocket } from './support/inspector-page.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function inspectorOn(): Promise<InspectorServer> {
  const inspector = await startInspectorServer({ port: 0, flushMs: 10 });
  cleanups.push(() => inspector.close());
  return inspector;
}

type Answer = Extract<ServerMessage, { t: 'ack' | 'error' }>;

/** Sends one raw frame and resolves with the server's answer to it (an `ack` or an `error`). */
async function answerTo(page: PageSocket, raw: string): Promise<Answer> {
  const answer = page.waitFor<Answer>((m) => m.t === 'ack' || m.t === 'error', true);
  page.ws.send(raw);
  return answer;
}

const deleteNote = defineTool({
  name: 'delete_note',
  description: 'Deletes a note',
  parameters: z.object({ name: z.string() }),
  needsApproval: true,
  execute: async ({ name }) => `deleted ${name}`,
});

/** An agent attached to `inspector`, waiting for approval of `call_del_1`. */
async function agentWaitingApproval(inspector: InspectorServer, page: PageSocket) {
  const scripted = await startScriptedServer({
    scenario: {
      turns: [
        { toolCalls: [{ id: 'call_del_1', name: 'delete_note', arguments: { name: 'a.md' } }] },
        { content: 'Deleted.' },
      ],
    },
  });
  cleanups.push(() => scripted.close());
  const agent = createAgent({
    sessionId: 'main-session',
    baseURL: scripted.url,
    apiKey: 'sk-inspector-input-test',
    tools: [deleteNote],
    inspect: inspector.inspect,
  });
  cleanups.push(() => agent.stop());
  inspector.attach(agent, { name: 'main' });
  const turn = agent.send('delete a.md');
  await page.waitFor(
    (m) =>
      m.t === 'batch' &&
      m.items.some((i) => i.k === 'status' && i.status.pending.some((p) => p.toolCallId === 'call_del_1')),
  );
  return { agent, turn };
}

describe('the inspector WebSocket validates every message', () => {
  it('answers messages it cannot carry out with an error and keeps serving', async () => {
    const inspector = await inspectorOn();
    const page = await connectPage(inspector.url);
    await page.waitFor((m) => m.t === 'hello');
    const garbage = [
      'not json',
      'null',
      '42',
      '"sync"',
      '[]',
      '{}',
      '{"t":"sync","session":{"toString":1}}',
      '{"t":"sync","id":1,"session":{"toString":1}}',
      '{"t":{"toString":1},"id":1,"session":"s"}',
      '{"t":"toString","id":1,"session":"s"}',
      '{"t":"__proto__","id":1,"session":"s"}',
      '{"__proto__":{"t":"sync","id":1,"session":"s"}}',
      '{"t":"approve","id":1,"session":"s","toolCallId":{"toString":1}}',
      '{"t":"reject","id":1,"session":"s","toolCallId":"c","reason":{"toString":1}}',
      '{"t":"sync","id":-1,"session":"s"}',
      '{"t":"sync","id":1e400,"session":"s"}',
    ];
    for (const raw of garbage) {
      const answer = await answerTo(page, raw);
      expect(answer, raw).toMatchObject({ error: expect.any(String) });
      if (answer.t === 'ack') expect(answer.ok, raw).toBe(false);
    }
    // A command with a usable id is answered by an ack with that id.
    expect(await answerTo(page, '{"t":"approve","id":7,"session":"s"}')).toMatchObject({
      t: 'ack',
      id: 7,
      ok: false,
    });
    expect(await answerTo(page, '{"t":"sync","id":8,"session":"nope"}')).toEqual({
      t: 'ack',
      id: 8,
      ok: false,
      error: 'no session "nope"',
    });
  });

  it('answers a command of unknown type with an error instead of rejecting the call', async () => {
    const inspector = await inspectorOn();
    const page = await connectPage(inspector.url);
    const { agent, turn } = await agentWaitingApproval(inspector, page);
    const unknown = { t: 'deny', id: 3, session: 'main-session', toolCallId: 'call_del_1' };
    const answer = await answerTo(page, JSON.stringify(unknown));
    expect(answer).toMatchObject({ t: 'ack', id: 3, ok: false, error: expect.stringContaining('unknown') });
    // Still waiting: the unknown command did nothing; approving runs the tool.
    expect(agent.state).toBe('WaitingApproval');
    page.send({ t: 'approve', id: 4, session: 'main-session', toolCallId: 'call_del_1' });
    expect(await page.ack(4)).toEqual({ t: 'ack', id: 4, ok: true });
    expect((await turn).response).toBe('Deleted.');
  });

  it('answers every random message and stays up (fast-check)', async () => {
    const inspector = await inspectorOn();
    const page = await connectPage(inspector.url);
    await agentWaitingApproval(inspector, page);
    // Command-like objects (known and unknown types, hostile keys and values) and any JSON at all;
    // no frame names the pending call, so a valid approve or reject is answered but decides nothing.
    const field = fc.oneof(fc.jsonValue(), fc.constantFrom('main-session', 'call_other', 0, -1, 1.5));
    const commandLike = fc.dictionary(
      fc.constantFrom(
        't',
        'id',
        'session',
        'toolCallId',
        'reason',
        'toString',
        'valueOf',
        '__proto__',
        'constructor',
      ),
      field,
    );
    const typed = fc.record({
      t: fc.constantFrom('sync', 'approve', 'reject', 'deny', 'hello', 'ack', 'toString', ''),
      id: fc.oneof(fc.nat(), fc.jsonValue()),
      session: field,
      toolCallId: fc.oneof(fc.constant('call_unknown'), field),
      reason: field,
    });
    const frame = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      commandLike.map((v) => JSON.stringify(v)),
      typed.map((v) => JSON.stringify(v)),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(frame, async (raw) => {
        const answer = await answerTo(page, raw);
        expect(answer.t === 'error' || answer.t === 'ack').toBe(true);
      }),
      { numRuns: 300 },
    );
    // Still up and still answering, and the pending call was not decided by any of it.
    const synced = page.waitFor<Extract<ServerMessage, { t: 'sync' }>>(
      (m) => m.t === 'sync' && m.session.info.id === 'main-session',
      true,
    );
    expect(await answerTo(page, '{"t":"sync","id":9,"session":"main-session"}')).toEqual({
      t: 'ack',
      id: 9,
      ok: true,
    });
    const { status } = (await synced).session;
    expect(status.state).toBe('WaitingApproval');
    expect(status.pending.map((p) => p.toolCallId)).toEqual(['call_del_1']);
  });
});

describe('the inspector HTTP server answers every request', () => {
  it('answers a lone % in the path with 400', async () => {
    const inspector = await inspectorOn();
    const token = new URL(inspector.url).search;
    expect((await httpGet(inspector.port, '/%')).status).toBe(400);
    expect((await httpGet(inspector.port, `/${token}`)).status).toBe(200);
  });

  it('answers random methods and paths with a status and stays up (fast-check)', async () => {
    const inspector = await inspectorOn();
    const token = new URL(inspector.url).search;
    const segment = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9%._~!$&'()*+,;=:@-]{0,12}$/),
      fc.constantFrom('%', '%E0%A4%A', '%00', '%2e%2e', '..', '.', '%2F', 'index.html', 'ws', 'js', '%C0%AE'),
    );
    const requestArb = fc.record({
      method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE'),
      path: fc.array(segment, { maxLength: 6 }).map((parts) => `/${parts.join('/')}`),
      query: fc.constantFrom('', token, '?token=', '?token=%', '?%', `${token}&token=x`),
    });
    await fc.assert(
      fc.asyncProperty(requestArb, async ({ method, path, query }) => {
        const res = await httpGet(inspector.port, `${path}${query}`, { method });
        expect([200, 400, 401, 404, 405]).toContain(res.status);
      }),
      { numRuns: 300 },
    );
    expect((await httpGet(inspector.port, `/${token}`)).status).toBe(200);
  });
});
