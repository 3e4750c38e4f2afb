import path from 'node:path';
import { parseArgs } from 'node:util';
import pc from 'picocolors';
import { createAgent } from '../../../agent/agent.js';
import type { CommandIo } from '../../command-io.js';
import { INSPECTOR_FLAGS, INSPECTOR_USAGE, startCliInspection } from '../../flags/inspector-flags.js';
import { type CliOtel, OTEL_FLAG, OTEL_USAGE, startCliOtel } from '../../flags/otel-flag.js';
import { connectModel, modelOptions } from '../../model/model-connection.js';
import { packageRoot } from '../../package-root.js';
import { createEventPrinter } from '../../terminal/event-printer.js';
import { runBundleDemo } from './bundle-demo.js';
import { notesDemoQuestion, notesDemoScenario, notesTools } from './notes-demo.js';

/**
 * `agentloop demo`: first an agent with three real file tools answers a question about
 * `examples/notes`; then the example bundle's facilitator runs `*intake-workflow` and saves a document.
 * Every event is printed as it happens. Runs on the scripted model unless OPENAI_API_KEY is set.
 */
export async function runDemoCommand(args: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...INSPECTOR_FLAGS, ...OTEL_FLAG, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    io.stdout(`Usage: agentloop demo [options]\n${INSPECTOR_USAGE}${OTEL_USAGE}`);
    return 0;
  }
  const otel = await startCliOtel(values.otel, io);
  const inspection = await startCliInspection(values, io);
  try {
    const code = await runDemo(io, inspection, otel);
    await inspection.holdOpen();
    return code;
  } finally {
    await inspection.close();
    await otel.close();
  }
}

async function runDemo(
  io: CommandIo,
  inspection: Awaited<ReturnType<typeof startCliInspection>>,
  otel: CliOtel,
): Promise<number> {
  const page = inspection.server !== undefined;
  // With the inspector page, the scripted model takes its time (so each state can be seen) and
  // reading a note needs the user's approval, given in the page.
  const connection = await connectModel(
    {},
    page ? { ...notesDemoScenario, latencyMs: 900 } : notesDemoScenario,
  );
  const out = { write: (s: string) => io.stdout(s) };
  try {
    await inspection.waitForPage();
    io.stdout(pc.bold(`agentloop demo: ${connection.description}\n`));
    io.stdout(pc.bold('Part 1: an agent with three file tools over examples/notes\n\n'));
    const notesRoot = path.join(packageRoot, 'examples', 'notes');
    const agent = createAgent({
      ...modelOptions(connection),
      instructions:
        'You answer questions about the notes in a folder. Use the tools to list, read and search them; read ' +
        'everything you cite. Answer in a short paragraph.',
      tools: notesTools(notesRoot),
      loopControlTools: false,
      inspect: inspection.inspectFor(connection.apiKey),
      ...(otel.telemetry ? { telemetry: otel.telemetry } : {}),
      ...(page ? { approval: (call: { name: string }) => call.name === 'read_note' || undefined } : {}),
    });
    otel.track(agent);
    const detach = inspection.attach(agent, { name: 'notes agent', title: notesDemoQuestion });
    agent.on('*', createEventPrinter(out, { redactor: agent.redactor }));
    const failedCalls: string[] = [];
    agent.on('tool_call_end', (e) => {
      if (e.error !== undefined) failedCalls.push(e.name);
    });
    if (page)
      agent.on('approval_requested', () =>
        io.stdout(pc.magenta('  (approve or reject it in the inspector page)\n')),
      );
    io.stdout(`${pc.bold('you:')} ${notesDemoQuestion}\n`);
    const result = await agent.send(notesDemoQuestion);
    io.stdout(
      `\n${pc.bold('result:')} ${result.terminateReason}, ${result.iterations} model calls, ` +
        `${result.messages.length} messages, ${result.usage.totalTokens} tokens\n`,
    );
    agent.stop();
    detach();
    if (!result.success) return 1;
    // The script's calls all succeed when the package is whole: a failure means a broken install.
    if (connection.scripted && failedCalls.length > 0) {
      io.stderr(
        pc.red(`demo: ${failedCalls.length} tool call(s) failed (${failedCalls.join(', ')}); see ✗ above\n`),
      );
      return 1;
    }
  } finally {
    await connection.close();
  }
  io.stdout(
    pc.bold('\nPart 2: a BMAD bundle agent (bundles/requirements-workflow), files loaded only on demand\n'),
  );
  const ok = await runBundleDemo(io, path.join(packageRoot, 'bundles', 'requirements-workflow'), {
    latencyMs: page ? 600 : 0,
    inspectFor: (apiKey) => inspection.inspectFor(apiKey),
    attach: (agent, name) => {
      otel.track(agent);
      return inspection.attach(agent, { name });
    },
    ...(otel.telemetry ? { telemetry: otel.telemetry } : {}),
  });
  return ok ? 0 : 1;
}
