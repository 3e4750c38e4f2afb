import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../src/index.js';
import { type InspectorServer, startInspectorServer } from '../src/inspector/inspector-server.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { launchChromium } from './support/chromium.js';
import { deferred } from './support/harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const artifacts = path.join(root, 'test-artifacts');

let browser: Browser;

beforeAll(() => {
  // The page's script is compiled from inspector/src by the build; compile it for this run.
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'inspector/tsconfig.json'],
    {
      cwd: root,
    },
  );
  mkdirSync(artifacts, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

async function launch(): Promise<Browser> {
  if (browser) return browser;
  browser = await launchChromium();
  return browser;
}

const active = (page: Page, state: string) =>
  page.waitForSelector(`#chart .state.active[data-key="${state}"]`, { timeout: 10_000 });

it('shows the running agent live and approves from the page', async () => {
  // Each step is held until the page has shown it: the model's first answer, the tool, the approval.
  const firstAnswer = deferred();
  const toolDone = deferred();
  const scripted: ScriptedServer = await startScriptedServer({
    scenario: {
      turns: [
        async () => {
          await firstAnswer.promise;
          return {
            content: 'Looking it up.',
            toolCalls: [{ name: 'lookup', arguments: { city: 'Lisbon' } }],
          };
        },
        { toolCalls: [{ id: 'call_delete_7', name: 'delete_note', arguments: { name: 'old.md' } }] },
        { content: 'Sunny in Lisbon; the old note is deleted.' },
      ],
    },
  });
  const inspector: InspectorServer = await startInspectorServer({ port: 0, flushMs: 20 });
  const deleted: string[] = [];
  const agent = createAgent({
    name: 'browser-test',
    baseURL: scripted.url,
    apiKey: 'sk-browser-test-key-000000',
    instructions: 'You help with notes.',
    tools: [
      defineTool({
        name: 'lookup',
        description: 'Weather lookup',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          await toolDone.promise;
          return `sunny in ${city}`;
        },
      }),
      defineTool({
        name: 'delete_note',
        description: 'Deletes a note',
        parameters: z.object({ name: z.string() }),
        needsApproval: true,
        execute: async ({ name }, ctx) => {
          deleted.push(`${ctx.toolCallId}:${name}`);
          return `deleted ${name}`;
        },
      }),
    ],
    inspect: inspector.inspect,
  });
  inspector.attach(agent, { name: 'browser test agent' });
  try {
    const page = await (await launch()).newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(inspector.url);
    await active(page, 'AwaitingInput');
    await expect(page.locator('.session .name').first().innerText()).resolves.toBe('browser test agent');

    const turn = agent.send('Weather in Lisbon, then delete old.md');
    await active(page, 'Thinking');
    firstAnswer.resolve();
    await active(page, 'ExecutingTool');
    await page.waitForSelector('#timeline .row.outcome-running[data-kind="tool_call_start"]');
    toolDone.resolve();
    await active(page, 'WaitingApproval');
    await page.waitForSelector('.approval[data-tool-call-id="call_delete_7"] button.approve');

    // A reload mid-run shows the same state and the same pending approval.
    await page.reload();
    await active(page, 'WaitingApproval');
    await page.waitForSelector('.approval[data-tool-call-id="call_delete_7"] button.approve:not([disabled])');
    const path = await page.locator('#path').innerText();
    expect(path).toContain('Thinking → ExecutingTool → Thinking → WaitingApproval');
    await page.screenshot({ path: path_('inspector-waiting-approval.png') });
    expect(deleted).toEqual([]);

    await page.click('.approval[data-tool-call-id="call_delete_7"] button.approve');
    const result = await turn;
    expect(result.success).toBe(true);
    expect(deleted).toEqual(['call_delete_7:old.md']);
    await active(page, 'Completed');
    await page.waitForSelector('#timeline .row[data-kind="turn_end"]');
    await page.waitForSelector('#transcript .msg.role-assistant >> text=Sunny in Lisbon');
    // The tool call's row has its duration and outcome; the tool result is folded in the transcript.
    await expect(
      page.locator('#timeline .row.outcome-ok[data-kind="tool_call_start"] .duration').first().innerText(),
    ).resolves.toMatch(/ms$/);
    await expect(page.locator('#transcript details.role-tool').count()).resolves.toBe(2);
    await expect(page.locator('#chart .edge.taken').count()).resolves.toBeGreaterThanOrEqual(4);
    await page.screenshot({ path: path_('inspector-completed.png') });
    expect(errors).toEqual([]);
  } finally {
    agent.stop();
    await inspector.close();
    await scripted.close();
  }
});

it('needs the token, and says so when a restarted server no longer takes it', async () => {
  const first = await startInspectorServer({ port: 0 });
  let second: InspectorServer | undefined;
  const page = await (await launch()).newPage();
  try {
    // The bare address is refused: the page needs the token from the URL the server gives.
    const bare = await page.goto(`http://127.0.0.1:${first.port}/`);
    expect(bare?.status()).toBe(401);
    expect(await page.content()).not.toContain('agentloop inspector');

    const tokened = await page.goto(first.url);
    expect(tokened?.status()).toBe(200);
    expect(tokened?.headers()['x-frame-options']).toBe('DENY');
    await page.waitForSelector('#conn.ok');
    expect(first.clientCount).toBe(1);

    // A new server on the same port has a new token: the open page stops retrying and says why.
    await first.close();
    second = await startInspectorServer({ port: first.port });
    await page.waitForSelector('#conn.down >> text=no longer valid', { timeout: 10_000 });
    expect(second.clientCount).toBe(0);
  } finally {
    await page.close();
    await first.close().catch(() => {});
    await second?.close();
  }
});

function path_(name: string) {
  return path.join(artifacts, name);
}
