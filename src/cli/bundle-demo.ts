import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pc from 'picocolors';
import type { InspectionEvent } from 'xstate';
import { type Agent, createAgent } from '../agent/agent.js';
import { toAgentOptions } from '../agent/agent-options.js';
import { loadBundleAgent } from '../bundle/bundle-agent.js';
import type { Scenario } from '../testing/scenario.js';
import type { CommandIo } from './command-io.js';
import { createEventPrinter } from './event-printer.js';
import { connectModel, modelOptions } from './model-connection.js';

const SAVED_DOCUMENT = `# Requirements intake: Promise Tracker

- Date: {date}
- Facilitated with: Friend
- Owner: Product team

## Problem

Support agents lose track of promises made to customers on calls (call-backs, refunds, follow-ups); the support team and the customers who wait feel it most.

## Users and stakeholders

Support agents (primary users); team leads; customers waiting on a promise.

## What success looks like

To be confirmed in the next session.

## Scope

To be confirmed in the next session.

## Constraints and open questions

- Draft saved early at the user's request; steps 3 to 5 are still open.
`;

/** What the scripted model does: load the workflow by tool call, ask, then save the document. */
export const bundleDemoScenario: Scenario = {
  turns: [
    {
      toolCalls: [
        {
          name: 'execute_workflow',
          arguments: { workflow_path: '{bundle-root}/workflows/intake-workflow/workflow.yaml' },
        },
      ],
    },
    {
      chunkDelayMs: 10,
      content:
        'Step 1 of 5: Understand the problem. Hi Friend! This intake has five short steps. ' +
        'What problem are you trying to solve, and who feels it most today?',
    },
    {
      chunkDelayMs: 10,
      content:
        'So: support agents lose track of promises made on calls, and the support team feels it most. ' +
        'Step 2 of 5: Identify the people involved. Who will use the result, and who else has a stake in it?',
    },
    (request) => ({
      toolCalls: [
        {
          name: 'save_output',
          arguments: {
            file_path: '{output_folder}/intake-promise-tracker-{date}.md',
            content: SAVED_DOCUMENT.replace('{date}', dateOf(request)),
          },
        },
      ],
    }),
    {
      chunkDelayMs: 10,
      content:
        'Saved the draft intake document. Next time we can finish steps 3 to 5, or run *stakeholder-map.',
    },
  ],
};

/** The date the workflow resolved, as the model saw it in the execute_workflow result. */
function dateOf(request: { messages: { role: string; content?: unknown }[] }): string {
  for (const m of request.messages) {
    const match =
      m.role === 'tool' && typeof m.content === 'string' ? /"date":"([\d-]+)"/.exec(m.content) : null;
    if (match) return match[1]!;
  }
  return new Date().toISOString().slice(0, 10);
}

/** The user's lines in the bundle demo. */
export const bundleDemoUserLines = [
  '*intake-workflow',
  'Support agents lose track of promises made to customers on calls. The support team feels it most.',
  "Support agents and their team leads. Let's stop here: please save a draft of what we have.",
];

/** How the demo's inspector watches the bundle agent (see `agentloop demo --inspector-port`). */
export interface BundleDemoWatch {
  /** Milliseconds the scripted model waits before each answer. */
  latencyMs?: number;
  inspectFor?: (apiKey: string | undefined) => ((event: InspectionEvent) => void) | undefined;
  /** Shows the agent; returns what to call after it stops. */
  attach?: (agent: Agent<unknown>, name: string) => () => void;
}

/**
 * The bundle part of the demo: the example bundle's intake facilitator runs `*intake-workflow` in a
 * temporary project folder. Only config.yaml is read at start; the workflow loads when the model calls
 * `execute_workflow`; the document is written by `save_output`.
 */
export async function runBundleDemo(
  io: CommandIo,
  bundleRoot: string,
  watch: BundleDemoWatch = {},
): Promise<boolean> {
  const projectRoot = await mkdtemp(path.join(tmpdir(), 'agentloop-demo-'));
  const connection = await connectModel(
    {},
    watch.latencyMs ? { ...bundleDemoScenario, latencyMs: watch.latencyMs } : bundleDemoScenario,
  );
  try {
    const bundleAgent = await loadBundleAgent({
      bundleRoot,
      agent: 'intake-facilitator',
      projectRoot,
      onFileLoad: (e) =>
        io.stdout(
          pc.blue(`📄 read ${path.relative(bundleRoot, e.path) || e.path} (${e.reason}, ${e.bytes} bytes)\n`),
        ),
    });
    io.stdout(`\n${bundleAgent.greeting}\n`);
    const agent = createAgent(
      toAgentOptions(
        bundleAgent.definition,
        {},
        {
          name: bundleAgent.name,
          ...modelOptions(connection),
          inspect: watch.inspectFor?.(connection.apiKey),
        },
      ),
    );
    const detach = watch.attach?.(agent as Agent<unknown>, bundleAgent.name);
    agent.on(
      '*',
      createEventPrinter({ write: (s) => io.stdout(s) }, { states: false, redactor: agent.redactor }),
    );
    let ok = true;
    for (const line of bundleDemoUserLines) {
      io.stdout(`\n${pc.bold('you:')} ${line}\n`);
      const result = await agent.send(line);
      ok &&= result.terminateReason === 'completed' || result.terminateReason === 'question';
    }
    agent.stop();
    detach?.();
    const saved = agent.messages
      .filter((m) => m.role === 'tool')
      .map((m) => /"path":"([^"]+)"/.exec(String(m.content))?.[1])
      .filter((p): p is string => p?.startsWith(bundleAgent.outputFolder) === true);
    for (const file of saved) {
      io.stdout(`\n${pc.bold(`saved ${file}:`)}\n${await readFile(file, 'utf8')}`);
    }
    return ok && saved.length > 0;
  } finally {
    await connection.close();
  }
}
