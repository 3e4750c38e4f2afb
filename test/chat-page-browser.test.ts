import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, FileSessionStore } from '../src/index.js';
import { type StartedAgentServer, startAgentServer } from '../src/server/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { buildChatPage } from './support/chat-page.js';
import { launchChromium } from './support/chromium.js';
import { deferred } from './support/harness.js';

let browser: Browser;
let dir = '';
beforeAll(async () => {
  [browser] = await Promise.all([launchChromium(), buildChatPage()]);
  dir = await mkdtemp(path.join(tmpdir(), 'chat-page-'));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

it('streams a turn, answers an approval with its button, and shows the finished turn after a server restart', async () => {
  // The model's answers are held so the page can be seen mid-run: after the first one (text, plan,
  // a tool), before the approval, and after the approval while the server restarts.
  const secondCall = deferred();
  const afterApproval = deferred();
  const finish = deferred();
  const model: ScriptedServer = await startScriptedServer({
    scenario: {
      turns: [
        {
          content: 'Looking it up. <img src=x onerror="document.title=\'pwned\'">',
          toolCalls: [
            {
              name: 'update_plan',
              arguments: {
                steps: [
                  { step: 'Look up the weather', status: 'in_progress' },
                  { step: 'Delete the old note', status: 'pending' },
                ],
              },
            },
            { name: 'lookup', arguments: { city: 'Lisbon' } },
          ],
        },
        async () => {
          await secondCall.promise;
          return { toolCalls: [{ id: 'call_delete_7', name: 'delete_note', arguments: { name: 'old.md' } }] };
        },
        async () => {
          afterApproval.resolve();
          await finish.promise;
          return { content: 'Sunny in Lisbon; the old note is deleted.' };
        },
      ],
    },
  });
  const deleted: string[] = [];
  const options = {
    agent: () => ({
      instructions: 'You help with notes.',
      model: 'gpt-4o-mini',
      loopControlTools: false,
      tools: [
        defineTool({
          name: 'lookup',
          description: 'Weather lookup',
          parameters: z.object({ city: z.string() }),
          execute: ({ city }) => `sunny in ${city}`,
        }),
        defineTool({
          name: 'delete_note',
          description: 'Deletes a note',
          parameters: z.object({ name: z.string() }),
          needsApproval: true,
          execute: ({ name }, ctx) => {
            deleted.push(`${ctx.toolCallId}:${name}`);
            return `deleted ${name}`;
          },
        }),
      ],
    }),
    runtime: { baseURL: model.url, apiKey: 'test-key' },
    // The page works behind a token: it reads it from its address's fragment.
    auth: { token: 'page-secret' },
    page: true,
  };
  let server: StartedAgentServer = await startAgentServer({
    ...options,
    store: new FileSessionStore({ dir }),
  });
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    const opened = await page.goto(`${server.url}/#token=page-secret`);
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.fill('#input', 'Weather in Lisbon, then delete old.md');
    await page.click('#send');

    // The first answer, the plan and the tool line are on the page while the run goes on.
    const assistant = page.locator('.msg.assistant').first();
    await assistant.filter({ hasText: 'Looking it up.' }).waitFor();
    await page.locator('.tool', { hasText: 'lookup({"city":"Lisbon"})' }).waitFor();
    await page.locator('.tool .result', { hasText: 'sunny in Lisbon' }).waitFor();
    await page.locator('#plan li.in_progress', { hasText: 'Look up the weather' }).waitFor();
    await page.locator('#usage', { hasText: 'tokens · $' }).waitFor();
    expect(await page.locator('.approval').count()).toBe(0);
    // The model's markup is shown as text, never run.
    expect(await assistant.innerText()).toContain('<img src=x');
    expect(await page.locator('#log img').count()).toBe(0);

    secondCall.resolve();
    const approve = page.locator('.approval[data-interrupt-id="approval-call_delete_7"] button.approve');
    await approve.waitFor();
    expect(await page.locator('.approval pre').innerText()).toContain('"name": "old.md"');
    expect(deleted).toEqual([]);
    await approve.click();
    await afterApproval.promise;
    expect(deleted).toEqual(['call_delete_7:old.md']);
    await page.locator('.tool .result', { hasText: 'deleted old.md' }).waitFor();

    // The server stops mid-turn (its connections cut, the turn let to finish, as `agentloop serve`
    // does on SIGTERM) and a new one starts on the same port and store: the page reconnects and shows
    // the end it missed.
    const port = new URL(server.url).port;
    const closing = server.close();
    await page.locator('#status', { hasText: 'reconnecting' }).waitFor();
    finish.resolve();
    await closing;
    server = await startAgentServer({
      ...options,
      store: new FileSessionStore({ dir }),
      port: Number(port),
    });
    await page.locator('.msg.assistant', { hasText: 'Sunny in Lisbon; the old note is deleted.' }).waitFor({
      timeout: 15_000,
    });
    await page.locator('.notice', { hasText: 'reconnected' }).waitFor();
    expect(await page.locator('.error').count()).toBe(0);
    // A reload keeps the thread (in the address) and shows its latest run again.
    expect(page.url()).toContain('thread=');
    await page.reload();
    await page.locator('.msg.assistant', { hasText: 'Sunny in Lisbon; the old note is deleted.' }).waitFor();
    expect(await page.locator('.error').count()).toBe(0);
    expect(deleted).toEqual(['call_delete_7:old.md']);
    expect(await page.title()).toBe('agentloop chat');
    // @ag-ui/client rethrows the failed `reader.cancel()` of the stream cut by the restart (unhandled,
    // in its own teardown); nothing else may fail on the page.
    expect(errors.filter((e) => e !== 'network error')).toEqual([]);
  } finally {
    await page.close();
    secondCall.resolve();
    finish.resolve();
    await server.close();
    await model.close();
  }
});

it('asks for the token when the server refuses the page without it, then sends the message', async () => {
  const model = await startScriptedServer({ scenario: { turns: [{ content: 'hello behind a token' }] } });
  const server = await startAgentServer({
    agent: () => ({ instructions: 'You help.', loopControlTools: false }),
    store: new FileSessionStore({ dir }),
    runtime: { baseURL: model.url, apiKey: 'test-key' },
    auth: { token: 'asked-secret' },
    page: true,
  });
  const page = await browser.newPage();
  const prompts: string[] = [];
  page.on('dialog', (dialog) => {
    prompts.push(dialog.message());
    void dialog.accept('asked-secret');
  });
  try {
    await page.goto(`${server.url}/`);
    await page.fill('#input', 'hi');
    await page.click('#send');
    await page.locator('.msg.assistant', { hasText: 'hello behind a token' }).waitFor();
    expect(prompts).toEqual([expect.stringContaining('token')]);
    expect(page.url()).toContain('token=asked-secret');
    expect(await page.locator('.error').count()).toBe(0);
  } finally {
    await page.close();
    await server.close();
    await model.close();
  }
});
