import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Agent } from '../../agent/agent.js';
import { createAgent } from '../../agent/agent.js';
import { toAgentOptions } from '../../agent/agent-options.js';
import { defineAgent } from '../../prompt/agent-definition.js';
import { FileSessionStore } from '../../session/file-store/file-session-store.js';
import { createSessionId, type SessionRecord } from '../../session/session-store.js';
import type { Tool } from '../../tools/define-tool.js';
import {
  type CliAgent,
  type CliAgentSource,
  loadCliAgent,
  projectFolder,
  SKILLS_FLAG,
} from '../cli-agent.js';
import { cliApprovalPolicy } from '../cli-approvals.js';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import {
  INSPECTOR_FLAGS,
  INSPECTOR_USAGE,
  inspectorPort,
  startCliInspection,
} from '../flags/inspector-flags.js';
import { MCP_CONFIG_FLAG, type McpFlag, mcpServersFlag, mcpSourcesLine } from '../flags/mcp-config-flag.js';
import { authDirBeside, terminalSignIn } from '../flags/mcp-sign-in.js';
import { OTEL_FLAG, OTEL_USAGE, startCliOtel } from '../flags/otel-flag.js';
import { connectModel, MODEL_FLAG_OPTIONS, modelFlags, modelOptions } from '../model/model-connection.js';
import { terminalSafe } from '../terminal/terminal-safe.js';
import { ChatInput, type ChatStreams } from './chat-input.js';
import { ChatRenderer, chatColors } from './chat-renderer.js';
import { ChatSession } from './chat-session.js';

export const CHAT_USAGE = `Usage: agentloop chat [--project <dir>] --agent <id> [options]
       agentloop chat --bundle <root> --agent <id> [options]
       agentloop chat [--skills <dir>]... [options]
       agentloop chat --resume <session-id> [options]
  Without --bundle and --agent: a plain assistant with the project's Agent Skills (and --tools, --mcp-config).
  --project <dir>       the project folder (default: current directory); with --agent and no --bundle its
                        BMAD install (_bmad/ of BMAD 6, bmad/ of an alpha tree) holds the agent; sessions are kept
                        in <project>/.agentloop/sessions unless AGENTLOOP_HOME or --sessions-dir says otherwise
  --output <dir>        where save_output may write (default: the bundle config's output_folder)
  --skills <dir>        a folder of Agent Skills (repeatable), searched after the project's .agents/skills
                        and .claude/skills; without --agent, a plain assistant runs with them
  --mcp-config <file>   an mcp.json ({ "mcpServers": { ... } }): the servers' tools join the agent's
                        (repeat for more files; the project's .mcp.json is read first when present)
                        (remembered by the session: --resume starts them again)
  --resume <id>         continue a saved session (its bundle and agent, skills and MCP config are remembered)
  --session <id>        the id for a new session (default: time + random)
  --sessions-dir <dir>  where sessions are kept
  --tools <module>      an ES module exporting \`tools\` (defineTool results) to add to the agent's tools
  --yes                 approve every tool call; without it, calls that need approval (save_output,
                        tools that ask) are asked
  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
                        the model (default: OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL)
${INSPECTOR_USAGE}${OTEL_USAGE}Without a model (no OPENAI_API_KEY / OPENAI_BASE_URL, no --scenario) the agent runs on the scripted
demo its bundle ships in scenarios/<agent>.yaml (the example bundle's is a scripted facilitator);
a bundle without one needs a model.
`;

/** How the chat reaches the terminal; tests may pass their own. */
export function processStreams(): ChatStreams {
  return {
    input: process.stdin,
    output: process.stdout,
    terminal: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  };
}

/** `agentloop chat`: talk with a bundle agent in the terminal; every session is saved and resumable. */
export async function runChatCommand(
  args: string[],
  io: CommandIo,
  streams = processStreams(),
): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      bundle: { type: 'string' },
      agent: { type: 'string' },
      project: { type: 'string' },
      output: { type: 'string' },
      ...SKILLS_FLAG,
      resume: { type: 'string' },
      session: { type: 'string' },
      'sessions-dir': { type: 'string' },
      tools: { type: 'string' },
      ...MCP_CONFIG_FLAG,
      yes: { type: 'boolean', default: false },
      ...MODEL_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h', default: false },
      ...INSPECTOR_FLAGS,
      ...OTEL_FLAG,
    },
  });
  if (values.help) {
    io.stdout(CHAT_USAGE);
    return 0;
  }
  const projectRoot = projectFolder(values.project);
  const store = new FileSessionStore({
    projectRoot,
    ...(values['sessions-dir'] ? { dir: values['sessions-dir'] } : {}),
  });
  let resumed: SessionRecord | undefined;
  if (values.resume) {
    resumed = await store.load(values.resume);
    if (!resumed) {
      io.stderr(
        `agentloop chat: no session "${values.resume}" in ${store.dir} (agentloop sessions lists them)\n`,
      );
      return 1;
    }
  }
  const origin = sessionOrigin(resumed);
  // A resumed session brings its bundle and agent, or (the plain assistant) its skills folders.
  const source = (from: SessionOrigin): CliAgentSource => ({
    bundle: values.bundle ?? from.bundle,
    agent: values.agent ?? from.agent,
    projectRoot,
    sessionsDir: store.dir,
    outputFolder: values.output,
    skills: values.skills ?? from.skills,
  });
  const first = source(origin);
  if (first.bundle && !first.agent) throw new UsageError('missing --agent <id> (the agent to talk with)');
  inspectorPort(values);
  const extraTools = values.tools ? await loadToolModule(values.tools) : [];
  const cliAgent = await loadCliAgent(first);
  // The MCP servers join whichever agent that is; a resumed session starts its own again.
  const mcpFiles = (from: SessionOrigin) => values['mcp-config'] ?? from.mcpConfig ?? [];
  const mcpFor = (from: SessionOrigin) => mcpServersFlag(mcpFiles(from), projectRoot);
  const firstMcp = await mcpFor(origin);
  // Everything opened is closed on the way out, whatever fails after it.
  const closers: (() => Promise<void> | void)[] = [];
  try {
    for (const warning of cliAgent.warnings) io.stderr(`${terminalSafe(warning)}\n`);
    // A fork made with --model runs on that model unless --model says otherwise.
    const connection = await connectModel(
      modelFlags({ ...values, model: values.model ?? origin.model }),
      cliAgent.scripted,
    );
    closers.push(() => connection.close());
    // The inspector page answers approvals too: whichever answer comes first wins.
    const inspection = await startCliInspection(values, io);
    closers.push(() => inspection.close());
    const otel = await startCliOtel(values.otel, io);
    closers.push(() => otel.close());
    const renderer = new ChatRenderer({
      write: (text: string) => {
        streams.output.write(text);
      },
      terminal: streams.terminal,
      colors: chatColors(streams.terminal),
      agentLabel: `${cliAgent.icon ? `${cliAgent.icon} ` : ''}${cliAgent.name}`,
      projectRoot,
      columns: () => streams.output.columns ?? 80,
    });
    const input = new ChatInput(streams);
    closers.push(() => input.close());
    // The agent's definition, plus the --tools module's tools (defineAgent names a clash).
    const chatDefinition = (loaded: CliAgent) =>
      extraTools.length === 0
        ? loaded.definition
        : defineAgent({ ...loaded.definition, tools: [...loaded.definition.tools, ...extraTools] });
    const open = (sessionId: string, loaded: CliAgent, mcp: McpFlag, from: SessionOrigin): Agent => {
      const inspect = inspection.inspectFor(connection.apiKey);
      const agent = createAgent(
        toAgentOptions(
          chatDefinition(loaded),
          {},
          {
            name: loaded.name,
            ...modelOptions(connection),
            approval: cliApprovalPolicy(values.yes),
            store,
            session: sessionId,
            mcpServers: mcp.servers,
            // A server that needs sign-in prints its link; its tools join once the browser comes back.
            mcpAuth: {
              dir: authDirBeside(store.dir),
              // Lines that may come while the user types at the prompt go above it.
              signIn: terminalSignIn((line) => input.above(() => renderer.unwrappedLine(terminalSafe(line)))),
              signedIn: (server, tools) =>
                input.above(() =>
                  renderer.line(`MCP server ${terminalSafe(server)}: signed in, ${tools} tools`),
                ),
            },
            sessionInfo: {
              ...(loaded.bundle ? { bundle: loaded.bundle.root } : {}),
              meta: {
                ...(loaded.bundle ? { agent: loaded.bundle.agent } : {}),
                project: projectRoot,
                ...(values.skills ? { skills: values.skills.map((d) => path.resolve(projectRoot, d)) } : {}),
                ...(values.tools ? { tools: path.resolve(values.tools) } : {}),
                ...(mcp.files.length > 0 ? { mcpConfig: mcp.files } : {}),
                ...(from.model !== undefined ? { model: values.model ?? from.model } : {}),
                ...(from.forkedFrom !== undefined ? { forkedFrom: from.forkedFrom } : {}),
              },
            },
            ...(inspect ? { inspect } : {}),
            ...(otel.telemetry ? { telemetry: otel.telemetry } : {}),
          },
        ),
      );
      otel.track(agent);
      inspection.attach(agent as Agent<unknown>, { name: loaded.name, title: sessionId });
      return agent;
    };
    const session = new ChatSession({
      input,
      renderer,
      store,
      approval: cliApprovalPolicy(values.yes),
      connection: connection.description,
      ...(mcpSourcesLine(firstMcp) ? { mcpSources: mcpSourcesLine(firstMcp) } : {}),
      resumeCommand: (id) =>
        [
          'agentloop chat --resume',
          id,
          ...(projectRoot !== process.cwd() ? ['--project', projectRoot] : []),
          ...(values['sessions-dir'] ? ['--sessions-dir', values['sessions-dir']] : []),
        ].join(' '),
      open: async (id) => {
        const record = await store.load(id);
        const from = sessionOrigin(record);
        // Another bundle's session: load that bundle's agent.
        const other =
          from.bundle &&
          from.agent &&
          (path.resolve(from.bundle) !== cliAgent.bundle?.root || from.agent !== cliAgent.bundle?.agent);
        const loaded = other
          ? await loadCliAgent({ ...source(from), bundle: from.bundle, agent: from.agent })
          : cliAgent;
        const wanted = mcpFiles(from).map((f) => path.resolve(f));
        const same = wanted.join('\n') === firstMcp.files.join('\n');
        const mcp = same ? firstMcp : await mcpFor(from);
        return { agent: open(id, loaded, mcp, from), persona: loaded, record };
      },
    });
    return await session.run(values.resume ?? values.session ?? createSessionId(), !values.resume);
  } finally {
    for (const close of closers.reverse())
      await Promise.resolve()
        .then(close)
        .catch(() => {});
  }
}

/**
 * Where a saved session's agent came from: its bundle and agent, or the skills folders of the plain
 * assistant; and its MCP config file.
 */
export interface SessionOrigin {
  bundle?: string;
  agent?: string;
  skills?: string[];
  /** The `--mcp-config` files (a session saved before several were allowed has one string). */
  mcpConfig?: string[];
  /** The model a fork was made to run on (`agentloop fork --model`); kept by later saves. */
  model?: string;
  /** The session and transcript entry a fork was made from; kept by later saves. */
  forkedFrom?: unknown;
}

/** The bundle and agent (or skills folders) and the MCP config a saved session came from. */
export function sessionOrigin(record: SessionRecord | undefined): SessionOrigin {
  const agent = record?.meta?.agent;
  const skills = record?.meta?.skills;
  const mcpConfig = record?.meta?.mcpConfig;
  const { model, forkedFrom } = record?.meta ?? {};
  return {
    ...(typeof model === 'string' && model !== '' ? { model } : {}),
    ...(forkedFrom !== undefined ? { forkedFrom } : {}),
    ...(record?.bundle ? { bundle: record.bundle } : {}),
    ...(typeof agent === 'string' ? { agent } : {}),
    ...(typeof mcpConfig === 'string' ? { mcpConfig: [mcpConfig] } : {}),
    ...(Array.isArray(mcpConfig) && mcpConfig.every((f) => typeof f === 'string') ? { mcpConfig } : {}),
    ...(Array.isArray(skills) && skills.every((d) => typeof d === 'string') ? { skills } : {}),
  };
}

/** Loads `tools` (or the default export) of an ES module: an array of `defineTool` results. */
export async function loadToolModule(file: string): Promise<Tool[]> {
  const module = (await import(pathToFileURL(path.resolve(file)).href)) as {
    tools?: unknown;
    default?: unknown;
  };
  const tools = module.tools ?? module.default;
  if (
    !Array.isArray(tools) ||
    tools.some((t) => typeof t?.name !== 'string' || typeof t?.execute !== 'function')
  ) {
    throw new Error(`--tools ${file}: the module must export \`tools\`, an array of defineTool() results`);
  }
  return tools as Tool[];
}
