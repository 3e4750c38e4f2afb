// The local inspector server through its real parts: HTTP, a WebSocket client, real agents on the
// scripted model server. (The page itself is driven in inspector-browser.test.ts.)
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineAgent, defineTool, subagentTool } from '../src/index.js';
import { type InspectorServer, startInspectorServer } from '../src/inspector/inspector-server.js';
import type { BatchItem, InspectionRecord, ServerMessage, SessionInfo } from '../src/inspector/protocol.js';
import { startScriptedServer } from '../src/testing/index.js';
import { connectPage, httpGet } from './support/inspector-page.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function inspectorOn(): Promise<InspectorServer> {
  const inspector = await startInspectorServer({ port: 0, flushMs: 10 });
  cleanups.push(() => inspector.close());
  return inspector;
}

/** The page's path with its token, as in the server's `url`. */
const pagePath = (inspector: InspectorServer) => {
  const url = new URL(inspector.url);
  return `${url.pathname}${url.search}`;
};

const deleteNote = defineTool({
  name: 'delete_note',
  description: 'Deletes a note',
  parameters: z.object({ name: z.string() }),
  needsApproval: true,
  execute: async ({ name }) => `deleted ${name}`,
});

describe('the inspector server over HTTP', () => {
  it('serves the page from publicDir, to this machine only', async () => {
    const inspector = await inspectorOn();
    const page = await httpGet(inspector.port, pagePath(inspector));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('agentloop inspector');
    expect((await httpGet(inspector.port, '/style.css')).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
    expect((await httpGet(inspector.port, pagePath(inspector), { host: 'evil.example' })).status).toBe(403);
    expect((await httpGet(inspector.port, pagePath(inspector), { method: 'POST' })).status).toBe(405);
    expect((await httpGet(inspector.port, '/nothing-here.js')).body).toBe('not found');
    const token = new URL(inspector.url).search;
    expect((await httpGet(inspector.port, `/%2e%2e/%2e%2e/package.json${token}`)).status).toBe(404);
    expect((await httpGet(inspector.port, `/..%2f..%2fpackage.json${token}`)).status).toBe(404);
  });

  it('answers a malformed path with 400 and keeps serving', async () => {
    const inspector = await inspectorOn();
    // Any site open in the browser can request this (e.g. as an image); it must not crash the agent.
    expect((await httpGet(inspector.port, '/%E0%A4%A')).status).toBe(400);
    expect((await httpGet(inspector.port, pagePath(inspector))).status).toBe(200);
  });

  it('says how to build the page when it is missing', async () => {
    const inspector = await startInspectorServer({ port: 0, publicDir: '/nonexistent-inspector-dir' });
    cleanups.push(() => inspector.close());
    const page = await httpGet(inspector.port, pagePath(inspector));
    expect(page.status).toBe(404);
    expect(page.body).toContain('npm run build');
  });
});

describe('the inspector server over its WebSocket', () => {
  it('greets a page with the chart and every session, and answers its commands', async () => {
    const scripted = await startScriptedServer({
      scenario: {
        turns: [
          { toolCalls: [{ id: 'call_del_1', name: 'delete_note', arguments: { name: 'a.md' } }] },
          { content: 'Deleted.' },
        ],
      },
    });
    cleanups.push(() => scripted.close());
    const inspector = await inspectorOn();
    const agent = createAgent({
      sessionId: 'main-session',
      baseURL: scripted.url,
      apiKey: 'sk-inspector-server-test',
      tools: [deleteNote],
      inspect: inspector.inspect,
    });
    cleanups.push(() => agent.stop());
    const detach = inspector.attach(agent, { name: 'main', title: 'notes' });
    inspector.showSaved({
      info: { id: 'old-session', name: 'old', state: 'Completed', updatedAt: '2024-01-01T00:00:00Z' },
      status: {
        value: 'Completed',
        state: 'Completed',
        status: 'stopped',
        turn: 1,
        iteration: 1,
        maxIterations: 10,
        pending: [],
        turnUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        totalUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        terminateReason: 'completed',
        error: null,
        messageCount: 0,
        plan: null,
      },
      messages: [],
      events: [],
    });

    expect(inspector.clientCount).toBe(0);
    const waiting = inspector.waitForClient();
    const page = await connectPage(inspector.url);
    await waiting;
    expect(inspector.clientCount).toBe(1);
    const hello = await page.waitFor<Extract<ServerMessage, { t: 'hello' }>>((m) => m.t === 'hello');
    expect(hello.chart.id).toBe('agent');
    expect(hello.sessions).toEqual([
      {
        id: 'main-session',
        name: 'main',
        live: true,
        source: 'live',
        state: 'AwaitingInput',
        title: 'notes',
      },
      {
        id: 'old-session',
        name: 'old',
        live: false,
        source: 'saved',
        state: 'Completed',
        updatedAt: '2024-01-01T00:00:00Z',
      },
    ]);
    await page.waitFor((m) => m.t === 'sync' && m.session.info.id === 'old-session');

    // Commands: an unknown session, a sync, a saved session that cannot be driven, garbage.
    page.ws.send('not json');
    page.ws.send('null');
    page.ws.send('42');
    page.send({ t: 'sync', id: 1, session: 'nope' });
    expect(await page.ack(1)).toEqual({ t: 'ack', id: 1, ok: false, error: 'no session "nope"' });
    page.send({ t: 'approve', id: 2, session: 'old-session', toolCallId: 'x' });
    expect(await page.ack(2)).toMatchObject({ ok: false, error: 'this session is not running here' });

    const turn = agent.send('delete a.md');
    await page.waitFor(
      (m) =>
        m.t === 'batch' &&
        m.items.some((i) => i.k === 'status' && i.status.pending.some((p) => p.toolCallId === 'call_del_1')),
    );
    // Approving an unknown call is an error the page sees; the right id runs the tool.
    page.send({ t: 'approve', id: 3, session: 'main-session', toolCallId: 'call_unknown' });
    expect((await page.ack(3)).ok).toBe(false);
    page.send({ t: 'approve', id: 4, session: 'main-session', toolCallId: 'call_del_1' });
    expect(await page.ack(4)).toEqual({ t: 'ack', id: 4, ok: true });
    const result = await turn;
    expect(result.response).toBe('Deleted.');

    // The conversation arrives as appended deltas; a sync sends it whole.
    await page.waitFor(
      (m) =>
        m.t === 'batch' &&
        m.items.some((i) => i.k === 'status' && i.status.messageCount === result.messages.length),
    );
    const deltas = page.items().filter((i): i is Extract<BatchItem, { k: 'messages' }> => i.k === 'messages');
    const fromDeltas: unknown[] = [];
    for (const d of deltas) fromDeltas.splice(d.from, Number.POSITIVE_INFINITY, ...d.items);
    const syncing = page.waitFor<Extract<ServerMessage, { t: 'sync' }>>(
      (m) => m.t === 'sync' && m.session.info.id === 'main-session',
      true,
    );
    page.send({ t: 'sync', id: 5, session: 'main-session' });
    const sync = await syncing;
    expect((await page.ack(5)).ok).toBe(true);
    expect(sync.session.messages).toEqual(fromDeltas);
    expect(sync.session.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Deleted.' });
    expect(sync.session.events.map((e) => e.type)).toContain('tool_call_end');
    expect(JSON.stringify(page.got)).not.toContain('sk-inspector-server-test');

    // Detached: still listed, no longer live, no longer driven.
    const listed = page.waitFor<Extract<ServerMessage, { t: 'sessions' }>>((m) => m.t === 'sessions', true);
    agent.stop();
    detach();
    const sessions = (await listed).sessions;
    expect(sessions.find((s) => s.id === 'main-session')).toMatchObject({ live: false, source: 'live' });
    page.send({ t: 'reject', id: 6, session: 'main-session', toolCallId: 'call_del_1' });
    expect(await page.ack(6)).toMatchObject({ ok: false, error: 'this session is not running here' });
  });

  it('links invoked actors to their parent actor and subagents to their parent session', async () => {
    const summarizer = defineAgent({
      name: 'summarizer',
      description: 'Summarizes',
      instructions: 'You summarize.',
    });
    const scripted = await startScriptedServer({
      respond: (req, index) => {
        if (String(req.messages[0]?.content).startsWith('You summarize')) return { content: 'Short.' };
        return index === 0
          ? { toolCalls: [{ name: 'summarizer', arguments: { task: 'summarize' } }] }
          : { content: 'It says: Short.' };
      },
    });
    cleanups.push(() => scripted.close());
    const inspector = await inspectorOn();
    const page = await connectPage(inspector.url);
    await page.waitFor((m) => m.t === 'hello');
    const runtime = { baseURL: scripted.url, apiKey: 'sk-sub' };
    const parent = createAgent({
      ...runtime,
      sessionId: 'parent',
      instructions: 'You delegate.',
      inspect: inspector.inspect,
      tools: [
        subagentTool(summarizer, {
          runtime: { ...runtime, inspect: inspector.inspect },
          onChild: (child, { parentSessionId }) =>
            inspector.attach(child, { name: 'summarizer', parentId: parentSessionId }),
        }),
      ],
    });
    cleanups.push(() => parent.stop());
    inspector.attach(parent, { name: 'parent' });
    const result = await parent.send('summarize');
    expect(result.response).toBe('It says: Short.');
    await new Promise((resolve) => setTimeout(resolve, 50));

    const lists = page.got.filter((m): m is Extract<ServerMessage, { t: 'sessions' }> => m.t === 'sessions');
    const child = lists.at(-1)?.sessions.find((s: SessionInfo) => s.id === 'parent/summarizer/call_0_0');
    expect(child).toMatchObject({ parentId: 'parent', name: 'summarizer', live: false });

    for (const session of ['parent', 'parent/summarizer/call_0_0']) {
      const records = page
        .items()
        .filter((i): i is Extract<BatchItem, { k: 'inspect' }> => i.k === 'inspect' && i.session === session)
        .map((i) => i.event);
      const actors = records.filter((r: InspectionRecord) => r.type === '@xstate.actor');
      const roots = actors.filter((r) => r.sessionId === r.rootId);
      const invoked = actors.filter((r) => r.sessionId !== r.rootId);
      expect(invoked.map((r) => r.name)).toContain('callLlm');
      // The root actor has no parent; every actor it invoked names it.
      for (const r of roots) expect(r.parentId).toBeUndefined();
      for (const r of invoked) expect(r.parentId).toBe(r.rootId);
    }
  });

  it('reads no private XState field (names starting with _)', () => {
    const dir = new URL('../src/inspector/', import.meta.url);
    const reads = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(new URL(f, dir), 'utf8')
          .split('\n')
          .filter((line) => !line.trim().startsWith('//') && /\._[a-zA-Z]/.test(line))
          .map((line) => `${f}: ${line.trim()}`),
      );
    expect(reads).toEqual([]);
  });
});

describe('the page', () => {
  it("is compiled with the server's one protocol file and nothing else from src/", () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const listed = execFileSync(
      process.execPath,
      [
        path.join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        'inspector/tsconfig.json',
        '--listFilesOnly',
      ],
      { cwd: root, encoding: 'utf8' },
    );
    const files = listed
      .split('\n')
      .filter((f) => f.trim() !== '' && !f.includes('node_modules'))
      .map((f) => path.relative(root, f).split(path.sep).join('/'));
    expect(files).toContain('inspector/src/main.ts');
    expect(files.filter((f) => !f.startsWith('inspector/src/'))).toEqual(['src/inspector/protocol.ts']);
  }, 30_000);
});
