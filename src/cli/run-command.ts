import { parseArgs } from 'node:util';
import { createAgent } from '../agent/agent.js';
import { toAgentOptions } from '../agent/agent-options.js';
import { loadBundleAgent } from '../bundle/bundle-agent.js';
import type { CommandIo } from './command-io.js';
import { createEventPrinter } from './event-printer.js';
import { INSPECTOR_FLAGS, INSPECTOR_USAGE, startCliInspection } from './inspector-flags.js';
import { connectModel, MODEL_FLAG_OPTIONS, modelFlags, modelOptions } from './model-connection.js';
import { terminalSafe, terminalSafeJson } from './terminal-safe.js';

const USAGE = `Usage: agentloop run --bundle <root> --agent <id-or-name> [options] "<message>"
  --project <dir>     the folder the agent works in ({project-root}; default: current directory)
  --output <dir>      where save_output may write (default: the bundle config's output_folder)
  --json              print the ExecutionResult as JSON on stdout (events go to stderr)
  --yes               approve every tool call that asks for approval
  --base-url <url> --model <id> --api-key <key> --scenario <file>
${INSPECTOR_USAGE}`;

/** `agentloop run`: one turn with a bundle agent, events printed as they happen. */
export async function runRunCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      bundle: { type: 'string' },
      agent: { type: 'string' },
      project: { type: 'string' },
      output: { type: 'string' },
      json: { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      ...MODEL_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h', default: false },
      ...INSPECTOR_FLAGS,
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const message = positionals.join(' ').trim();
  if (!values.bundle || !values.agent || !message) {
    io.stderr(USAGE);
    return 2;
  }
  const bundleAgent = await loadBundleAgent({
    bundleRoot: values.bundle,
    agent: values.agent,
    ...(values.project ? { projectRoot: values.project } : {}),
    ...(values.output ? { outputFolder: values.output } : {}),
  });
  const connection = await connectModel(modelFlags(values));
  const print = values.json ? io.stderr : io.stdout;
  const inspection = await startCliInspection(values, io);
  try {
    const agent = createAgent(
      toAgentOptions(
        bundleAgent.definition,
        {},
        {
          name: bundleAgent.name,
          ...modelOptions(connection),
          inspect: inspection.inspectFor(connection.apiKey),
        },
      ),
    );
    const detach = inspection.attach(agent, { name: bundleAgent.name, title: message });
    agent.on('*', createEventPrinter({ write: print }, { states: false, redactor: agent.redactor }));
    agent.on('approval_requested', (event) => {
      for (const call of event.pending) {
        if (values.yes) agent.approve(call.toolCallId);
        // With the inspector page open, the user answers there.
        else if (inspection.server)
          print(`  (approve or reject ${terminalSafe(call.name)} in ${inspection.server.url})\n`);
        else agent.reject(call.toolCallId, 'non-interactive run without --yes');
      }
    });
    const result = await agent.send(message);
    agent.stop();
    detach();
    // Printed like every other output: redacted (a server's error body may echo the key; the
    // messages hold what the user typed), whatever the field; and with nothing a terminal acts on
    // (JSON keeps the exact text, DEL and C1 controls escaped).
    const shown = agent.redactor.redactValue(result);
    if (values.json) io.stdout(`${terminalSafeJson(shown)}\n`);
    else print(`\n${terminalSafe(shown.response)}\n`);
    await inspection.holdOpen();
    return result.terminateReason === 'error' ? 1 : 0;
  } finally {
    await connection.close();
    await inspection.close();
  }
}
