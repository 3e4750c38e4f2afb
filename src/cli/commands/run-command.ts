import type { Readable, Writable } from 'node:stream';
import { createAgent } from '../../agent/agent.js';
import { toAgentOptions } from '../../agent/agent-options.js';
import { loadCliAgent, projectFolder, SKILLS_FLAG, SKILLS_USAGE } from '../cli-agent.js';
import { answerRunApprovals, cliApprovalPolicy } from '../cli-approvals.js';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import {
  INSPECTOR_FLAGS,
  INSPECTOR_USAGE,
  inspectorPort,
  startCliInspection,
} from '../flags/inspector-flags.js';
import { MCP_CONFIG_FLAG, mcpServersFlag, mcpSourcesLine } from '../flags/mcp-config-flag.js';
import { projectAuthDir } from '../flags/mcp-sign-in.js';
import { OTEL_FLAG, OTEL_USAGE, startCliOtel } from '../flags/otel-flag.js';
import { connectModel, MODEL_FLAG_OPTIONS, modelFlags, modelOptions } from '../model/model-connection.js';
import { createEventPrinter } from '../terminal/event-printer.js';
import { terminalSafe, terminalSafeJson } from '../terminal/terminal-safe.js';

const USAGE = `Usage: agentloop run [--project <dir>] --agent <id-or-name> [options] "<message>"
       agentloop run --bundle <root> --agent <id-or-name> [options] "<message>"
       agentloop run [--skills <dir>]... [options] "<message>"
  One turn with a BMAD agent, or without --agent with a plain assistant that has the project's Agent
  Skills. The answer alone goes to stdout (pipe it); progress goes to stderr.
  --mcp-config <file> an mcp.json ({ "mcpServers": { ... } }): the servers' tools join the agent's
                      (repeat for more files; the project's .mcp.json is read first when present)
  --project <dir>     the project folder ({project-root}; default: current directory); with --agent and
                      no --bundle its BMAD install (_bmad/ of BMAD 6, bmad/ of an alpha tree) holds the agent
  --bundle <root>     a bundle folder or an installed BMAD tree elsewhere
  --output <dir>      where save_output may write (default: the bundle config's output_folder;
                      <project>/output for the plain assistant)
${SKILLS_USAGE}  --json              print the ExecutionResult as JSON on stdout instead of the answer
  --yes               approve every tool call; without it, calls that need approval (save_output,
                      tools that ask) are asked on the terminal, and declined when there is none
  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
                      the model (default: OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL; with none,
                      the bundle's scripted demo, scenarios/<agent>.yaml, when it ships one)
${INSPECTOR_USAGE}${OTEL_USAGE}`;

/** The streams `run` asks approvals on; tests may pass their own. */
export interface RunStreams {
  stdin: Readable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
}

/** `agentloop run`: one turn with a bundle agent; the answer on stdout, progress on stderr. */
export async function runRunCommand(
  args: string[],
  io: CommandIo,
  streams: RunStreams = { stdin: process.stdin, stderr: process.stderr },
): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      bundle: { type: 'string' },
      agent: { type: 'string' },
      project: { type: 'string' },
      output: { type: 'string' },
      ...SKILLS_FLAG,
      json: { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      ...MCP_CONFIG_FLAG,
      ...MODEL_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h', default: false },
      ...INSPECTOR_FLAGS,
      ...OTEL_FLAG,
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const message = positionals.join(' ').trim();
  if (!message) throw new UsageError('missing the message to send (the last argument, e.g. "*help")');
  inspectorPort(values);
  const mcp = await mcpServersFlag(values['mcp-config'], projectFolder(values.project));
  const cliAgent = await loadCliAgent({
    bundle: values.bundle,
    agent: values.agent,
    projectRoot: values.project,
    outputFolder: values.output,
    skills: values.skills,
  });
  const progress = io.stderr;
  for (const warning of cliAgent.warnings) progress(`${terminalSafe(warning)}\n`);
  // Everything opened is closed on the way out, whatever fails after it.
  const closers: (() => Promise<void>)[] = [];
  try {
    const otel = await startCliOtel(values.otel, io);
    closers.push(() => otel.close());
    const connection = await connectModel(modelFlags(values), cliAgent.scripted);
    closers.push(() => connection.close());
    progress(`model: ${connection.description}\n`);
    const mcpSources = mcpSourcesLine(mcp);
    if (mcpSources) progress(`${terminalSafe(mcpSources)}\n`);
    const inspection = await startCliInspection(values, io);
    closers.push(() => inspection.close());
    const agent = createAgent(
      toAgentOptions(
        cliAgent.definition,
        {},
        {
          name: cliAgent.name,
          ...modelOptions(connection),
          approval: cliApprovalPolicy(values.yes),
          inspect: inspection.inspectFor(connection.apiKey),
          mcpServers: mcp.servers,
          // No one to sign in here: a server that needs it is reported (agentloop mcp login <name>).
          mcpAuth: { dir: projectAuthDir(projectFolder(values.project)) },
          ...(otel.telemetry ? { telemetry: otel.telemetry } : {}),
        },
      ),
    );
    otel.track(agent);
    // The MCP servers end with the command, whatever ends it.
    closers.push(() => agent.close());
    const detach = inspection.attach(agent, { name: cliAgent.name, title: message });
    agent.on(
      '*',
      createEventPrinter({ write: progress }, { states: false, redactor: agent.redactor, text: 'progress' }),
    );
    const terminal = streams.stdin.isTTY && streams.stderr.isTTY;
    const stopAsking = answerRunApprovals(agent, {
      note: progress,
      terminal: terminal ? { input: streams.stdin, output: streams.stderr } : undefined,
      pageUrl: inspection.server?.url,
      ...(cliAgent.pathVariables
        ? { paths: { resolve: cliAgent.pathVariables, projectRoot: projectFolder(values.project) } }
        : {}),
    });
    const result = await agent.send(cliAgent.menuChoice?.(message) ?? message).finally(stopAsking);
    await agent.close();
    detach();
    // Printed like every other output: redacted (a server's error body may echo the key; the
    // messages hold what the user typed), whatever the field; and with nothing a terminal acts on
    // (JSON keeps the exact text, DEL and C1 controls escaped).
    const shown = agent.redactor.redactValue(result);
    if (values.json) io.stdout(`${terminalSafeJson(shown)}\n`);
    else if (shown.response) io.stdout(`${terminalSafe(shown.response)}\n`);
    await inspection.holdOpen();
    return result.terminateReason === 'error' ? 1 : 0;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}
