import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileLoadEvent } from '../src/bundle/index.js';
import { bundleDemoScenario, bundleDemoUserLines } from '../src/cli/commands/demo/bundle-demo.js';
import { createAgent, loadBundleAgent, toAgentOptions } from '../src/index.js';
import { type ScriptedServer, startScriptedServer } from '../src/testing/index.js';
import { assertToolCallsAnswered } from './support/harness.js';

const bundleRoot = path.resolve(import.meta.dirname, '..', 'bundles', 'requirements-workflow');
let server: ScriptedServer | undefined;
afterEach(async () => server?.close());

describe('example bundle end to end over HTTP', () => {
  it('sends config first, instructions only after execute_workflow, and saves the document', async () => {
    const projectRoot = await mkdtemp(path.join(tmpdir(), 'agentloop-e2e-'));
    const loads: FileLoadEvent[] = [];
    const bundleAgent = await loadBundleAgent({
      bundleRoot,
      agent: 'intake-facilitator',
      projectRoot,
      onFileLoad: (e) => loads.push(e),
    });
    // Start-up read the agent file and config.yaml only.
    expect(loads.map((l) => [path.relative(bundleRoot, l.path), l.reason])).toEqual([
      ['agents/intake-facilitator.md', 'agent'],
      ['config.yaml', 'critical-action'],
    ]);
    server = await startScriptedServer({ scenario: bundleDemoScenario });
    const agent = createAgent(
      toAgentOptions(bundleAgent.definition, {}, { baseURL: server.url, apiKey: 'test' }),
    );
    const first = await agent.send(bundleDemoUserLines[0]!);
    expect(first.response).toMatch(/What problem are you trying to solve/);

    const [request1, request2] = server.requests;
    const text = (r: typeof request1) => JSON.stringify(r!.messages);
    // The first request carries the config values but no workflow instructions.
    expect(text(request1)).toMatch(/Untitled Project|Friend/);
    expect(text(request1)).not.toMatch(/Understand the problem/);
    expect(request1!.tools!.map((t) => (t as { function: { name: string } }).function.name)).toEqual(
      expect.arrayContaining(['read_file', 'execute_workflow', 'save_output']),
    );
    // The instructions reached the model only in the tool result of execute_workflow.
    const toolResult = request2!.messages.find((m) => m.role === 'tool');
    expect(String(toolResult?.content)).toMatch(/Understand the problem/);
    expect(loads.slice(2).map((l) => l.reason)).toEqual(
      expect.arrayContaining(['workflow', 'instructions', 'template']),
    );

    for (const line of bundleDemoUserLines.slice(1)) await agent.send(line);
    assertToolCallsAnswered(agent.messages);
    const outDir = path.join(projectRoot, 'docs', 'requirements');
    const files = await readdir(outDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^intake-promise-tracker-\d{4}-\d{2}-\d{2}\.md$/);
    const saved = await readFile(path.join(outDir, files[0]!), 'utf8');
    expect(saved).toMatch(/^# Requirements intake: Promise Tracker/);
    expect(saved).not.toMatch(/\{\{|\{date\}/);
    agent.stop();
  });
});
