import { toAgentOptions } from '../../agent/agent-options.js';
import { startWorker } from '../../workers/session-worker.js';
import { AGENT_FLAG_OPTIONS, loadFlagAgent, projectFolder, SKILLS_USAGE } from '../cli-agent.js';
import { cliApprovalPolicy } from '../cli-approvals.js';
import { parseFlags, positiveInteger, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { MCP_CONFIG_FLAG, serviceMcpOptions } from '../flags/mcp-config-flag.js';
import { OTEL_FLAG, OTEL_USAGE, startCliOtel } from '../flags/otel-flag.js';
import { openCliStore, STORE_FLAG_OPTIONS, STORE_USAGE } from '../flags/store-flag.js';
import { connectModel, MODEL_FLAG_OPTIONS, modelFlags, modelOptions } from '../model/model-connection.js';
import { untilInterrupted } from '../until-interrupted.js';

const USAGE = `Usage: agentloop worker --store <url-or-dir> [--project <dir>] --agent <id> [options]
       agentloop worker --store <url-or-dir> --bundle <root> --agent <id> [options]
  Carries the sessions of a store: takes those with inputs in their inbox (posted by agentloop send
  or createSessionClient), runs them with the agent, and lets them go when they rest. Start several
  (on one database, or on one folder of this machine): each session is carried by one at a time, and
  a session a killed worker held goes on in another. A worker cannot ask: a call that needs approval
  (save_output, tools that ask) waits until agentloop send --approve / --reject answers it.
  One line per session taken and let go goes to stderr. Ctrl-C (or SIGTERM) finishes the current
  steps, lets the sessions go and exits 0.
${STORE_USAGE}  --project <dir>       the project folder (default: current directory); without --bundle its BMAD
                        install holds the agent
  --bundle <root>       a bundle folder or an installed BMAD tree elsewhere
  --agent <id>          the agent that runs every session
  --output <dir>        where save_output may write (default: the bundle config's output_folder)
${SKILLS_USAGE}  --mcp-config <file>   an mcp.json ({ "mcpServers": { ... } }): the servers' tools join the agent's
                        (repeat for more files; the project's .mcp.json is read first when present);
                        each session carried starts its own servers, and a server that needs a
                        sign-in is reported (agentloop mcp login <name>)
  --concurrency <n>     sessions carried at once (default 4)
  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
                        the model (default: OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL; with none,
                        the bundle's scripted demo, scenarios/<agent>.yaml, when it ships one)
${OTEL_USAGE}Exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 could not start (store, agent, model), 2 bad flags.
       agentloop worker --engine restate|dbos ... (the agent's service on a durable engine instead:
  agentloop worker --engine restate --help; docs/engines.md)
`;

/** `agentloop worker`: startWorker on a store, with a bundle agent built as `run` and `chat` build it. */
export async function runWorkerCommand(args: string[], io: CommandIo, signal?: AbortSignal): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      ...STORE_FLAG_OPTIONS,
      ...AGENT_FLAG_OPTIONS,
      ...MCP_CONFIG_FLAG,
      concurrency: { type: 'string' },
      ...MODEL_FLAG_OPTIONS,
      ...OTEL_FLAG,
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (!values.agent) throw new UsageError('missing --agent <id> (the agent that runs the sessions)');
  const concurrency = positiveInteger(values.concurrency, '--concurrency', 4);
  if (!values.store)
    throw new UsageError('missing --store <url-or-dir> (a postgres:// URL or a sessions folder)');
  const { cliAgent, projectRoot, say } = await loadFlagAgent(values, io);
  const withMcp = await serviceMcpOptions(values['mcp-config'], projectFolder(values.project), say);
  const closers: (() => Promise<void>)[] = [];
  try {
    const otel = await startCliOtel(values.otel, io);
    closers.push(() => otel.close());
    const opened = await openCliStore(values);
    closers.push(() => opened.close());
    const connection = await connectModel(modelFlags(values), cliAgent.scripted);
    closers.push(() => connection.close());
    const options = toAgentOptions(
      cliAgent.definition,
      {},
      {
        name: cliAgent.name,
        ...modelOptions(connection),
        approval: cliApprovalPolicy(false),
        ...withMcp,
        ...(otel.telemetry ? { telemetry: otel.telemetry } : {}),
        sessionInfo: {
          ...(cliAgent.bundle ? { bundle: cliAgent.bundle.root } : {}),
          meta: {
            ...(cliAgent.bundle ? { agent: cliAgent.bundle.agent } : {}),
            ...(projectRoot ? { project: projectRoot } : {}),
          },
        },
      },
    );
    const worker = startWorker({
      store: opened.store,
      concurrency,
      agent: () => options,
      onSession: (event) =>
        say(
          event.phase === 'claimed'
            ? `session ${event.sessionId}: carrying`
            : `session ${event.sessionId}: let go in ${event.state}`,
        ),
      onError: (error, id) => say(`session ${id}: ${error instanceof Error ? error.message : String(error)}`),
    });
    say(
      `agentloop worker (pid ${process.pid}): ${cliAgent.name} on ${opened.description}, ` +
        `${concurrency} at a time; model: ${connection.description}. Ctrl-C stops.`,
    );
    await untilInterrupted(signal);
    say(`stopping: letting ${worker.active} session(s) come to rest`);
    await worker.stop();
    say('stopped');
    return 0;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}
