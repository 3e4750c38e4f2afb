/**
 * "Fork here" in the inspector: a saved session's transcript offers it at each rest point; a click
 * forks through the server (behind its token and origin checks, the command checked like any other)
 * and opens the fork. In real Chromium; the page's hostile commands over the same WebSocket.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInspectCommand } from '../src/cli/commands/inspect-command.js';
import { FileSessionStore } from '../src/index.js';
import { type InspectorServer, startInspectorServer } from '../src/inspector/inspector-server.js';
import type { ServerMessage } from '../src/inspector/protocol.js';
import { createSanitizer } from '../src/inspector/sanitize.js';
import { savedSessionView } from '../src/inspector/saved-sessions.js';
import { launchChromium } from './support/chromium.js';
import { testDir } from './support/harness.js';
import { connectPage } from './support/inspector-page.js';
import { recordSession } from './support/recorded-session.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let browser: Browser | undefined;
const servers: InspectorServer[] = [];

beforeAll(() => {
  // The page's script is compiled from inspector/src by the build; compile it for this run.
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'inspector/tsconfig.json'],
    {
      cwd: root,
    },
  );
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const server of servers.splice(0)) await server.close();
});

/** An inspector showing saved session `orig` of a file store (forks go to `store` when given). */
async function inspectorWithSaved(options: { canFork: boolean }) {
  const store = new FileSessionStore({ dir: await testDir('inspector-fork-') });
  const recorded = await recordSession(store);
  const server = await startInspectorServer(options.canFork ? { store } : {});
  servers.push(server);
  server.showSaved(await savedSessionView(store, (await store.load('orig'))!, createSanitizer()));
  return { store, server, ...recorded };
}

describe('Fork here', () => {
  it('is offered at each rest point; a click forks the saved session and opens the fork', async () => {
    const { store, server, seq, entries } = await inspectorWithSaved({ canFork: true });
    const original = await readFile(store.files('orig').transcript, 'utf8');
    browser ??= await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(server.url);
      await page.locator('.session[data-session="orig"]').click();
      await page.waitForSelector('#transcript button.fork-here');
      const offered = await page
        .locator('#transcript button.fork-here')
        .evaluateAll((buttons) => buttons.map((b) => Number((b as HTMLElement).dataset.seq)));
      expect(offered).toEqual([seq.go, seq.lastResult, seq.done, seq.again, entries.at(-1)!.seq]);

      await page.locator(`#transcript button.fork-here[data-seq="${seq.lastResult}"]`).click();
      await page.waitForFunction(() => !['', 'orig'].includes(document.body.dataset.session ?? ''));
      const forkId = await page.evaluate(() => document.body.dataset.session!);
      await page.waitForSelector(`.session.selected[data-session="${forkId}"]`);
      // The fork's transcript: the five messages up to the cut, and the state it rests in.
      await expect.poll(() => page.locator('#transcript .msg').count()).toBe(5);
      await expect(page.locator('#current-state').innerText()).resolves.toBe('Interrupted');
      expect(await store.load(forkId)).toMatchObject({
        state: 'Interrupted',
        meta: { forkedFrom: { session: 'orig', seq: seq.lastResult } },
      });
      expect(await readFile(store.files('orig').transcript, 'utf8')).toBe(original);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('checks what a page sends: a bad cut, a bad seq, an unknown session are refused and write nothing', async () => {
    const { store, server, seq } = await inspectorWithSaved({ canFork: true });
    const ws = await connectPage(server.url);
    const cases: [unknown, RegExp][] = [
      [
        { t: 'fork', id: 1, session: 'orig', seq: seq.modelCall },
        /it is at a model call that started and has no result/,
      ],
      [{ t: 'fork', id: 2, session: 'orig', seq: seq.firstResult }, /it is inside a tool batch/],
      [{ t: 'fork', id: 3, session: 'orig', seq: -1 }, /^invalid fork command \(seq\)/],
      [{ t: 'fork', id: 4, session: 'orig', seq: '7' }, /^invalid fork command \(seq\)/],
      [{ t: 'fork', id: 5, session: 'ghost', seq: 3 }, /^no session "ghost"$/],
      [{ t: 'fork', id: 6, session: 'orig', seq: 2 ** 60 }, /^invalid fork command \(seq\)/],
    ];
    for (const [command, error] of cases) {
      ws.send(command as never);
      const id = (command as { id: number }).id;
      const ack = await ws.ack(id);
      expect(ack.ok, JSON.stringify(ack)).toBe(false);
      expect(ack.error).toMatch(error);
    }
    expect((await store.list()).map((s) => s.id)).toEqual(['orig']);
  });

  it('is not offered, and refused, by an inspector without a store', async () => {
    const { store, server, seq } = await inspectorWithSaved({ canFork: false });
    const ws = await connectPage(server.url);
    const sync = await ws.waitFor<Extract<ServerMessage, { t: 'sync' }>>((m) => m.t === 'sync');
    expect(sync.session.forkPoints).toBeUndefined();
    ws.send({ t: 'fork', id: 1, session: 'orig', seq: seq.go });
    expect(await ws.ack(1)).toMatchObject({
      ok: false,
      error: 'this inspector has no session store to fork into',
    });
    expect((await store.list()).length).toBe(1);
  });

  it('works in agentloop inspect, which forks into the folder it shows', async () => {
    const dir = await testDir('inspect-fork-');
    const store = new FileSessionStore({ dir });
    const { seq } = await recordSession(store);
    const stop = new AbortController();
    let stdout = '';
    const io = {
      stdout: (text: string) => {
        stdout += text;
      },
      stderr: () => {},
    };
    const done = runInspectCommand(['--dir', dir, '--inspector-port', '0', '--poll', '0'], io, stop.signal);
    try {
      while (!stdout.includes('press Ctrl-C')) await new Promise((resolve) => setTimeout(resolve, 10));
      const ws = await connectPage(/inspector: (\S+)/.exec(stdout)![1]!);
      const sync = await ws.waitFor<Extract<ServerMessage, { t: 'sync' }>>((m) => m.t === 'sync');
      expect(sync.session.forkPoints?.map((p) => p.seq)).toContain(seq.again);
      ws.send({ t: 'fork', id: 1, session: 'orig', seq: seq.again });
      const ack = await ws.ack(1);
      expect(ack).toMatchObject({ ok: true, session: expect.any(String) });
      expect(await store.load(ack.session!)).toMatchObject({ state: 'Interrupted', turns: 2 });
    } finally {
      stop.abort();
      await done;
    }
  });
});
