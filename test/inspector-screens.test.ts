import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Agent, createAgent, defineTool, FileSessionStore } from '../src/index.js';
import { type InspectorServer, startInspectorServer } from '../src/inspector/inspector-server.js';
import { createSanitizer } from '../src/inspector/sanitize.js';
import { loadSavedSessions } from '../src/inspector/saved-sessions.js';
import { type Scenario, type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { launchChromium } from './support/chromium.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Issue 16: the inspector page at 1280 and 800 px wide, in Chromium. Geometry is asserted through
 * the DOM (every statechart name inside its box, edge labels off the boxes and each other, nothing
 * clipped or overflowing); screenshots are taken for people to look at, never compared pixel by
 * pixel. They go to test-artifacts/inspector-screenshots/; `AGENTLOOP_UPDATE_SCREENSHOTS=1 npx
 * vitest run test/inspector-screens.test.ts` writes the ones docs/inspector-screenshots/ shows
 * (times and ids differ at every run: a plain test run leaves the committed ones alone).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHOTS =
  process.env.AGENTLOOP_UPDATE_SCREENSHOTS === '1'
    ? path.join(root, 'docs', 'inspector-screenshots')
    : path.join(root, 'test-artifacts', 'inspector-screenshots');

const INTAKE = [
  '# Requirements intake: Support call-backs',
  '',
  '## Problem',
  'Support agents lose track of promises made to customers on calls.',
  '',
  '## Success',
  'Fewer than 2 percent of call-backs missed.',
].join('\n');

let browser: Browser;
const servers: ScriptedServer[] = [];
let inspector: InspectorServer;
let dir: string;
const agents: Agent[] = [];

function saveTool() {
  return defineTool({
    name: 'save_output',
    description: 'Saves a document',
    parameters: z.object({ file_path: z.string(), content: z.string() }),
    needsApproval: true,
    execute: async ({ file_path }) => `saved ${file_path}`,
  });
}

function slowTool() {
  return defineTool({
    name: 'export_report',
    description: 'Never finishes on its own',
    parameters: z.object({ file_path: z.string() }),
    execute: (_args, { signal }) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  });
}

beforeAll(async () => {
  // The page's script is compiled from inspector/src by the build; compile it for this run.
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'inspector/tsconfig.json'],
    {
      cwd: root,
    },
  );
  await mkdir(SHOTS, { recursive: true });
  dir = await mkdtemp(path.join(tmpdir(), 'agentloop-inspector-screens-'));
  // A scripted server for each agent: its turns are counted from the conversation it is sent.
  const serve = async (turns: Scenario['turns']) => {
    const server = await startScriptedServer({ scenario: { turns } });
    servers.push(server);
    return server.url;
  };
  inspector = await startInspectorServer({ port: 0, flushMs: 20 });

  const store = new FileSessionStore({ dir: path.join(dir, 'sessions'), fsync: false });
  const saved = createAgent({
    name: 'Iris',
    baseURL: await serve([
      // A menu pick, then the first real answer.
      { content: 'Step 1 of 5: what problem are you trying to solve?' },
      { content: 'Noted. Step 2 of 5: who is involved?' },
    ]),
    apiKey: 'sk-screens-000000',
    instructions: 'You run requirements intakes.',
    store,
    session: 'intake-20261123-0942',
  });
  await saved.send('2');
  await saved.send('Support agents lose track of promises made to customers on calls');
  saved.stop();
  const sanitize = createSanitizer({ maxStringChars: 8000 });
  for (const view of await loadSavedSessions(store, sanitize)) inspector.showSaved(view);

  const waiting = createAgent({
    name: 'Iris',
    baseURL: await serve([
      {
        content: 'Saving the intake document now.',
        toolCalls: [
          {
            id: 'call_save_1',
            name: 'save_output',
            arguments: { file_path: '{output_folder}/intake-support-callbacks.md', content: INTAKE },
          },
        ],
      },
    ]),
    apiKey: 'sk-screens-000000',
    instructions: 'You run requirements intakes.',
    tools: [saveTool()],
    inspect: inspector.inspect,
  });
  agents.push(waiting);
  inspector.attach(waiting, { name: 'Iris', title: 'Must use the current CRM' });
  void waiting.send('Must use the current CRM');
  await waitUntil(() => waiting.pendingApprovals.length === 1, 'the approval to be pending');

  const stopped = createAgent({
    name: 'Reporter',
    baseURL: await serve([
      { toolCalls: [{ name: 'export_report', arguments: { file_path: 'docs/reports/callbacks.md' } }] },
    ]),
    apiKey: 'sk-screens-000000',
    instructions: 'You export reports.',
    tools: [slowTool()],
    inspect: inspector.inspect,
  });
  agents.push(stopped);
  inspector.attach(stopped, { name: 'Reporter', title: 'export the call-back report' });
  const turn = stopped.send('export the call-back report');
  await waitUntil(() => stopped.state === 'ExecutingTool', 'the tool to run');
  stopped.interrupt('the user pressed Ctrl+C');
  await turn;

  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const agent of agents) agent.stop();
  await inspector?.close();
  await Promise.all(servers.map((server) => server.close()));
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function pick(page: Page, name: string, state: string): Promise<void> {
  await page.click(`.session:has(.name:text-is("${name}")):has(.badge.state-${state})`);
  await page.waitForSelector(`#chart .state.active[data-key="${state}"]`, { timeout: 10_000 });
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Where the chart's boxes, their texts and the edge labels are on the screen, from the DOM. */
interface ChartGeometry {
  states: { key: string; box: Box; texts: { text: string; box: Box }[] }[];
  labels: { text: string; box: Box }[];
  svg: Box;
  scroll: Box & { scrollWidth: number; clientWidth: number };
}

// Kept as source text: the page runs it as written, with no helper the test's compiler may add.
const CHART_GEOMETRY = `(() => {
  const r = (el) => { const b = el.getBoundingClientRect(); return { x: b.left, y: b.top, w: b.width, h: b.height }; };
  const states = [...document.querySelectorAll('#chart .state')].map((g) => ({
    key: g.getAttribute('data-key'),
    box: r(g.querySelector(':scope > rect')),
    texts: [...g.querySelectorAll(':scope > text')].map((t) => ({ text: t.textContent, box: r(t) })),
  }));
  const labels = [...document.querySelectorAll('#chart .edge-label')].map((t) => ({ text: t.textContent, box: r(t) }));
  const scroll = document.querySelector('.chart-scroll');
  return {
    states,
    labels,
    svg: r(document.querySelector('#chart')),
    scroll: { ...r(scroll), scrollWidth: scroll.scrollWidth, clientWidth: scroll.clientWidth },
  };
})()`;

/** Half a pixel of rounding either way. */
const SLACK = 0.5;

function inside(inner: Box, outer: Box): boolean {
  return (
    inner.x >= outer.x - SLACK &&
    inner.y >= outer.y - SLACK &&
    inner.x + inner.w <= outer.x + outer.w + SLACK &&
    inner.y + inner.h <= outer.y + outer.h + SLACK
  );
}

function overlaps(a: Box, b: Box): boolean {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > SLACK && h > SLACK;
}

/** Elements under `selector` whose content is wider than their box (cut off, not ellipsized). */
async function overflowing(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})]
    .filter((el) => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).textOverflow !== 'ellipsis')
    .map((el) => el.tagName + '.' + el.className + ': ' + el.textContent.slice(0, 40))`);
}

/** Every statechart text inside its box, edge labels on no box and no other label, nothing clipped. */
async function expectChartFits(page: Page): Promise<void> {
  const g = (await page.evaluate(CHART_GEOMETRY)) as ChartGeometry;
  expect(g.states.length).toBeGreaterThanOrEqual(8);
  for (const state of g.states) {
    for (const text of state.texts) {
      expect(inside(text.box, state.box), `"${text.text}" inside the ${state.key} box`).toBe(true);
    }
    // Not clipped by the drawing's edges, nor by the panel it scrolls in.
    expect(inside(state.box, g.svg), `${state.key} inside the chart`).toBe(true);
  }
  const boxes = g.states.map((s) => s.box);
  g.labels.forEach((label, i) => {
    expect(inside(label.box, g.svg), `label "${label.text}" inside the chart`).toBe(true);
    const on = g.states.filter((s) => overlaps(label.box, s.box)).map((s) => s.key);
    expect(on, `label "${label.text}" on boxes`).toEqual([]);
    const others = g.labels.filter((o, j) => j !== i && overlaps(label.box, o.box)).map((o) => o.text);
    expect(others, `label "${label.text}" on other labels`).toEqual([]);
  });
  expect(boxes.length).toBe(g.states.length);
  expect(g.scroll.scrollWidth).toBeLessThanOrEqual(g.scroll.clientWidth);
  expect(inside(g.svg, g.scroll)).toBe(true);
  // Readable: the state names are drawn at least 11 px high, whatever the chart's scale.
  const interrupted = g.states.find((s) => s.key === 'Interrupted')!;
  expect(interrupted.texts[0]!.text).toBe('Interrupted');
  expect(interrupted.texts[0]!.box.h).toBeGreaterThanOrEqual(11);
}

describe.each([1280, 800])('the inspector page at %i px wide', (width) => {
  it('fits its texts in their boxes; arguments as lines; saved sessions by title and date', async () => {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const shot = (name: string) =>
      page.screenshot({ path: path.join(SHOTS, `inspector-${width}-${name}.png`), fullPage: width < 1100 });
    try {
      await page.goto(inspector.url);
      await page.waitForSelector('.session .name');

      // A call waiting for approval: its arguments a field a row, the document's lines as lines.
      await pick(page, 'Iris', 'WaitingApproval');
      const card = page.locator('.approval[data-tool-call-id="call_save_1"]');
      await card.waitFor();
      await expectChartFits(page);
      await expect(card.locator('.arg-key').allInnerTexts()).resolves.toEqual(['file_path', 'content']);
      const content = await card.locator('.arg-value').nth(1).innerText();
      expect(content).toBe(INTAKE);
      expect(await card.innerText()).not.toContain('\\n');
      await page.waitForSelector('#transcript .msg.role-assistant .args .arg-key');
      expect(await page.locator('#transcript').innerText()).not.toContain('\\n');
      expect(await overflowing(page, '.session *, #status *, .approval *')).toEqual([]);
      await shot('approval');

      // An interrupted turn: its state active and whole in the chart.
      await pick(page, 'Reporter', 'Interrupted');
      await expectChartFits(page);
      await expect(page.locator('#path').innerText()).resolves.toBe(
        'last turn: AwaitingInput → Thinking → ExecutingTool → Interrupted',
      );
      // The call the interrupt stopped is not shown as still running.
      const call = page.locator('#timeline .row[data-kind="tool_call_start"]');
      await expect(call.getAttribute('class')).resolves.toContain('outcome-error');
      await expect(call.locator('.detail').innerText()).resolves.toContain(
        'not finished: the turn ended (interrupted)',
      );
      await shot('interrupted');

      // A saved session: its first message that says something, when it was saved, how its turn ended.
      const saved = page.locator('.session:has(.source.saved)');
      await saved.click();
      await page.waitForSelector('.session.selected:has(.source.saved)');
      await expect(saved.locator('.name').innerText()).resolves.toBe('Iris');
      await expect(saved.locator('.title').getAttribute('title')).resolves.toBe(
        'Support agents lose track of promises made to customers on calls',
      );
      await expect(saved.locator('.source').innerText()).resolves.toMatch(
        /^saved · \d{4}-\d\d-\d\d \d\d:\d\d$/,
      );
      await expect(page.locator('#path').innerText()).resolves.toBe(
        'last turn: turn 2 ended in Completed (completed); saved sessions do not keep the states it went through',
      );
      expect(await overflowing(page, '.session *, #status *')).toEqual([]);
      await shot('saved');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
