import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent } from '../src/index.js';
import { startInspectorServer } from '../src/inspector/inspector-server.js';
import { startScriptedServer } from '../src/testing/index.js';
import { launchChromium } from './support/chromium.js';
import { deferred } from './support/harness.js';

// The plan beside the transcript in the local inspector (Chromium): a ten-step plan ticking live.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let browser: Browser | undefined;

beforeAll(() => {
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'inspector/tsconfig.json'],
    {
      cwd: root,
    },
  );
  mkdirSync(path.join(root, 'test-artifacts'), { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

const STEPS = Array.from({ length: 10 }, (_, i) => `step ${i + 1}`);
const planAt = (done: number) => ({
  steps: STEPS.map((step, i) => ({
    step,
    status: i < done ? 'completed' : i === done ? 'in_progress' : 'pending',
  })),
});

it('shows the plan beside the transcript as it ticks', async () => {
  // The fifth update waits until the page has shown the fourth.
  const shownFour = deferred();
  const turns = Array.from({ length: 11 }, (_, done) =>
    done === 5
      ? async () => {
          await shownFour.promise;
          return { toolCalls: [{ name: 'update_plan', arguments: planAt(done) }] };
        }
      : { toolCalls: [{ name: 'update_plan', arguments: planAt(done) }] },
  );
  const scripted = await startScriptedServer({ scenario: { turns: [...turns, { content: 'all done' }] } });
  const inspector = await startInspectorServer({ port: 0, flushMs: 20 });
  const agent = createAgent({
    name: 'planner',
    baseURL: scripted.url,
    apiKey: 'x',
    inspect: inspector.inspect,
  });
  inspector.attach(agent, { name: 'planner' });
  browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(inspector.url);
    await page.waitForSelector('#chart .state.active[data-key="AwaitingInput"]');
    expect(await page.locator('#plan').isHidden()).toBe(true);
    const turn = agent.send('ten steps');
    await page.waitForSelector('#plan h3 >> text=Plan · 4/10 done');
    await expect(page.locator('#plan .plan-step.completed').count()).resolves.toBe(4);
    await expect(page.locator('#plan .plan-step.in_progress').innerText()).resolves.toContain('step 5');
    shownFour.resolve();
    await turn;
    await page.waitForSelector('#plan h3 >> text=Plan · 10/10 done');
    await expect(page.locator('#plan .plan-step[data-status="completed"]').count()).resolves.toBe(10);
    await page.screenshot({ path: path.join(root, 'test-artifacts', 'inspector-plan.png') });
    expect(errors).toEqual([]);
  } finally {
    agent.stop();
    await inspector.close();
    await scripted.close();
  }
}, 60_000);
