import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pc from 'picocolors';
import type { InspectionEvent } from 'xstate';
import { type Agent, createAgent } from '../../../agent/agent.js';
import { toAgentOptions } from '../../../agent/agent-options.js';
import { loadBundleAgent } from '../../../bundle/bundle-agent.js';
import type { AgentTelemetry } from '../../../telemetry/agent-telemetry.js';
import type { Scenario, ScriptedRequest } from '../../../testing/scenario.js';
import type { CommandIo } from '../../command-io.js';
import { connectModel, modelOptions } from '../../model/model-connection.js';
import { createEventPrinter } from '../../terminal/event-printer.js';
import { failureAnswer, lastToolResults, type SeenToolResult, toolResults } from './demo-tool-results.js';

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

/**
 * What the scripted model does: load the workflow by tool call, ask its first two steps, then save
 * the document. The questions, the user's name and the date come from the workflow as
 * `execute_workflow` returned it, and the last answer from `save_output`'s result: when a tool fails,
 * the answer says so instead of going on as written.
 */
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
    (request) => {
      const workflow = loadedWorkflow(request);
      if (!workflow.ok) return failureAnswer('load the intake workflow', workflow.results);
      const first = workflow.steps[0]!;
      return {
        chunkDelayMs: 10,
        content:
          `Step 1 of ${workflow.steps.length}: ${first.goal}. Hi ${workflow.userName}! This intake has ` +
          `${workflow.steps.length} short steps. ${first.ask}`,
      };
    },
    (request) => {
      const workflow = loadedWorkflow(request);
      if (!workflow.ok) return failureAnswer('load the intake workflow', workflow.results);
      const second = workflow.steps[1]!;
      return {
        chunkDelayMs: 10,
        content:
          'So: support agents lose track of promises made on calls, and the support team feels it most. ' +
          `Step 2 of ${workflow.steps.length}: ${second.goal}. ${second.ask}`,
      };
    },
    (request) => {
      const workflow = loadedWorkflow(request);
      if (!workflow.ok) return failureAnswer('load the intake workflow', workflow.results);
      return {
        toolCalls: [
          {
            name: 'save_output',
            arguments: {
              file_path: '{output_folder}/intake-promise-tracker-{date}.md',
              content: SAVED_DOCUMENT.replace('{date}', workflow.date),
            },
          },
        ],
      };
    },
    (request) => {
      const [saved] = lastToolResults(request);
      if (!saved || saved.failed) return failureAnswer('save the draft', saved ? [saved] : []);
      const file = /"path":"([^"]+)"/.exec(saved.content)?.[1] ?? 'the output folder';
      return {
        chunkDelayMs: 10,
        content: `Saved the draft intake document to ${file}. Next time we can finish steps 3 to 5, or run *stakeholder-map.`,
      };
    },
  ],
};

/** The intake workflow as `execute_workflow` returned it in the conversation, or the failed call. */
type LoadedWorkflow =
  | { ok: true; steps: { goal: string; ask: string }[]; userName: string; date: string }
  | { ok: false; results: SeenToolResult[] };

function loadedWorkflow(request: ScriptedRequest): LoadedWorkflow {
  const results = toolResults(request)
    .flat()
    .filter((r) => r.name === 'execute_workflow');
  const result = results.at(-1);
  if (!result || result.failed) return { ok: false, results };
  let value: {
    instructions?: unknown;
    default_output_file?: unknown;
    config?: { user_name?: unknown };
  };
  try {
    value = JSON.parse(result.content);
  } catch {
    return { ok: false, results: [{ ...result, failed: true, content: 'Error: its result is not JSON' }] };
  }
  // The steps that ask the user something, with their goal and first question.
  const steps = [
    ...String(value.instructions ?? '').matchAll(/<step [^>]*goal="([^"]+)"[^>]*>([\s\S]*?)<\/step>/g),
  ]
    .map(([, goal, body]) => ({ goal: goal!, ask: /<ask>([\s\S]*?)<\/ask>/.exec(body!)?.[1]?.trim() ?? '' }))
    .filter((step) => step.ask !== '');
  if (steps.length < 2) {
    return {
      ok: false,
      results: [{ ...result, failed: true, content: 'Error: no steps with questions in it' }],
    };
  }
  const date = /(\d{4}-\d{2}-\d{2})/.exec(String(value.default_output_file ?? ''))?.[1];
  return {
    ok: true,
    steps,
    userName: String(value.config?.user_name ?? 'there'),
    date: date ?? new Date().toISOString().slice(0, 10),
  };
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
  /** The agent's telemetry (`--otel`). */
  telemetry?: AgentTelemetry;
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
          ...(watch.telemetry ? { telemetry: watch.telemetry } : {}),
        },
      ),
    );
    const detach = watch.attach?.(agent as Agent<unknown>, bundleAgent.name);
    agent.on(
      '*',
      createEventPrinter({ write: (s) => io.stdout(s) }, { states: false, redactor: agent.redactor }),
    );
    const failedCalls: string[] = [];
    agent.on('tool_call_end', (e) => {
      if (e.error !== undefined) failedCalls.push(e.name);
    });
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
    // The script's calls all succeed when the package is whole: a failure means a broken install.
    if (connection.scripted && failedCalls.length > 0) {
      io.stderr(
        pc.red(`demo: ${failedCalls.length} tool call(s) failed (${failedCalls.join(', ')}); see ✗ above\n`),
      );
      return false;
    }
    return ok && saved.length > 0;
  } finally {
    await connection.close();
  }
}
