import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundleDemoScenario, bundleDemoUserLines } from '../src/cli/commands/demo/bundle-demo.js';
import { notesDemoQuestion, notesDemoScenario, notesTools } from '../src/cli/commands/demo/notes-demo.js';
import { createAgent, loadBundleAgent, toAgentOptions } from '../src/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';

// The demo's scripted model answers from what the tools returned: a demo whose files are missing
// (an install without examples/) says so instead of printing an answer written in advance.

const repo = path.resolve(import.meta.dirname, '..');
let server: ScriptedServer | undefined;
afterEach(async () => server?.close());

async function askNotes(root: string) {
  server = await startScriptedServer({ scenario: notesDemoScenario });
  const agent = createAgent({
    baseURL: server.url,
    apiKey: 'test',
    instructions: 'You answer questions about notes.',
    tools: notesTools(root),
    loopControlTools: false,
  });
  const result = await agent.send(notesDemoQuestion);
  agent.stop();
  return result;
}

describe('the notes demo, scripted', () => {
  it('answers from the notes as the tools read them: the open point, the decisions, the plan', async () => {
    const result = await askNotes(path.join(repo, 'examples', 'notes'));
    expect(result.success).toBe(true);
    expect(result.response).toContain(
      'Still open: how long should the default tool timeout be? Ana suggests 60 seconds. (meeting-2026-11-02.md, line 7)',
    );
    expect(result.response).toContain('Decided: Tools run in parallel; results go back in call order.');
    expect(result.response).toContain('0.3: durable sessions and `agentloop chat`.');
  });

  it('reads what is there: other notes give another answer', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'agentloop-notes-'));
    await writeFile(
      path.join(root, 'standup.md'),
      '- Decided: ship on Friday.\n- Open: who writes the post?\n',
    );
    await writeFile(path.join(root, 'todo.txt'), 'nothing open here\n');
    const result = await askNotes(root);
    expect(result.response).toBe(
      'Still open: who writes the post? (standup.md, line 2)\nDecided: Ship on Friday.',
    );
    await rm(root, { recursive: true });
  });

  it('says the notes could not be listed when the folder is missing, and makes nothing up', async () => {
    const result = await askNotes(path.join(tmpdir(), 'agentloop-no-such-notes'));
    expect(result.response).toMatch(/^I could not list the notes:\nlist_notes \{\}: Error: ENOENT/);
    expect(result.response).not.toMatch(/Decided|release plan/);
  });
});

describe('the bundle demo, scripted', () => {
  it('takes its questions from the workflow execute_workflow returned, and fails visibly without it', async () => {
    const bundleRoot = await mkdtemp(path.join(tmpdir(), 'agentloop-bundle-'));
    await cp(path.join(repo, 'bundles', 'requirements-workflow'), bundleRoot, { recursive: true });
    const bundleAgent = await loadBundleAgent({
      bundleRoot,
      agent: 'intake-facilitator',
      projectRoot: await mkdtemp(path.join(tmpdir(), 'agentloop-project-')),
    });
    server = await startScriptedServer({ scenario: bundleDemoScenario });
    const options = toAgentOptions(bundleAgent.definition, {}, { baseURL: server.url, apiKey: 'test' });

    const whole = createAgent(options);
    const first = await whole.send(bundleDemoUserLines[0]!);
    expect(first.response).toBe(
      'Step 1 of 5: Understand the problem. Hi Friend! This intake has 5 short steps. ' +
        'What problem are you trying to solve, and who feels it most today?',
    );
    whole.stop();

    await rm(path.join(bundleRoot, 'workflows', 'intake-workflow'), { recursive: true });
    const broken = createAgent(options);
    const failed = await broken.send(bundleDemoUserLines[0]!);
    expect(failed.response).toMatch(/^I could not load the intake workflow:\nexecute_workflow .*Error/);
    expect(failed.response).not.toMatch(/Step 1/);
    broken.stop();
  });
});
