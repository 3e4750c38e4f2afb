// CopilotKit 1.74 (`@copilotkit/react-core`, with the `@ag-ui/client` 0.0.59 it bundles) on an agentloop
// AG-UI server with no CopilotKit runtime: the page of docs/examples/copilotkit-page.tsx, bundled here
// with esbuild, in Chromium.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, FileSessionStore } from '../src/index.js';
import { createAgentServer } from '../src/server/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { repoRoot } from './support/build-dist.js';
import { launchChromium } from './support/chromium.js';

let browser: Browser;
/** The bundle's files by URL path: `/app.js` and the chunks it imports when it needs them. */
const files = new Map<string, string>();
let dir = '';
beforeAll(async () => {
  const bundled = build({
    entryPoints: [path.join(repoRoot, 'docs', 'examples', 'copilotkit-page.tsx')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    write: false,
    // Chunks: what CopilotKit loads lazily (code highlighting, diagrams) stays out of the page's script.
    splitting: true,
    outdir: path.join(repoRoot, 'copilotkit-page-out'),
    entryNames: 'app',
    minify: true,
    logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.css': 'empty' },
    // As a user's bundler resolves the package's subpath, to this checkout's source.
    alias: { 'agentloop/server/client': path.join(repoRoot, 'src', 'server', 'client.ts') },
  });
  const [launched, out] = await Promise.all([launchChromium(), bundled]);
  browser = launched;
  for (const file of out.outputFiles) files.set(`/${path.basename(file.path)}`, file.text);
  dir = await mkdtemp(path.join(tmpdir(), 'copilotkit-page-'));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

it('docs/serve.md quotes the page as it is tested', async () => {
  const page = await readFile(path.join(repoRoot, 'docs', 'examples', 'copilotkit-page.tsx'), 'utf8');
  const docs = await readFile(path.join(repoRoot, 'docs', 'serve.md'), 'utf8');
  expect(docs).toContain(`\`\`\`tsx\n${page}\`\`\``);
});

const PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>CopilotKit on agentloop</title></head><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>';

it('runs five turns of a workflow with a tool card and an approval answered through useInterrupt', async () => {
  const model: ScriptedServer = await startScriptedServer({
    scenario: {
      turns: [
        { content: 'Hello! Which release is the note for?' },
        { content: 'Got it: release 2.4. What changed?' },
        { content: 'Noted: faster sync and a dark theme. Shall I save the note?' },
        {
          toolCalls: [
            {
              name: 'save_document',
              arguments: { name: 'release-2.4.md', text: 'Release 2.4: faster sync, a dark theme.' },
            },
          ],
        },
        { content: 'Saved release-2.4.md.' },
        { content: 'You are welcome. Goodbye!' },
      ],
    },
  });
  const saved: string[] = [];
  const store = new FileSessionStore({ dir });
  const handler = createAgentServer({
    agent: () => ({
      instructions: 'You write release notes.',
      loopControlTools: false,
      tools: [
        defineTool({
          name: 'save_document',
          description: 'Saves a document',
          parameters: z.object({ name: z.string(), text: z.string() }),
          needsApproval: true,
          execute: ({ name, text }) => {
            saved.push(`${name}: ${text}`);
            return `saved ${name}`;
          },
        }),
      ],
    }),
    store,
    runtime: { baseURL: model.url, apiKey: 'test-key' },
  });
  // The page and its script from the same origin as the agent server.
  const server: Server = createServer((req, res) => {
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    const file = files.get(req.url ?? '');
    if (file !== undefined) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(file);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const runs: { runId: string; resume?: unknown[] }[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/agents/default/runs')) runs.push(r.postDataJSON());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
  });
  const say = async (text: string) => {
    const input = page.locator('textarea').first();
    await input.fill(text);
    await input.press('Enter');
  };
  try {
    await page.goto(`http://127.0.0.1:${port}/`);
    await say('Hi, I need a release note');
    await page.getByText('Which release is the note for?').waitFor();
    await say('Release 2.4');
    await page.getByText('Got it: release 2.4. What changed?').waitFor();
    await say('Faster sync and a dark theme');
    await page.getByText('Shall I save the note?').waitFor();
    await say('Yes, save it');
    const approve = page.locator('.approval button', { hasText: 'Approve' });
    await approve.waitFor();
    expect(saved).toEqual([]);
    await approve.click();
    await page.getByText('Saved release-2.4.md.').waitFor();
    await page.locator('.tool-card[data-status="complete"]', { hasText: 'saved release-2.4.md' }).waitFor();
    expect(saved).toEqual(['release-2.4.md: Release 2.4: faster sync, a dark theme.']);
    // useInterrupt resumed under the interrupted run's own runId, which the server took as the resume.
    const resume = runs.findIndex((r) => (r.resume?.length ?? 0) > 0);
    expect(resume).toBe(4);
    expect(runs[resume]!.runId).toBe(runs[resume - 1]!.runId);
    await say('Thanks');
    await page.getByText('You are welcome. Goodbye!').waitFor();

    // The conversation the model got last (the server's session) holds each message once: five user
    // messages, and one tool result, the tool's own (not the answer CopilotKit adds as a tool message).
    const last = model.requests.at(-1)!.messages;
    expect(last.filter((m) => m.role === 'user')).toHaveLength(5);
    expect(last.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['saved release-2.4.md']);
    expect((await store.list()).length).toBe(1);
    expect(saved).toHaveLength(1);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await handler.close();
    await model.close();
  }
});
