#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRedactor } from '../events/redact.js';
import { runChatCommand } from './chat/chat-command.js';
import { usageErrorOf } from './cli-args.js';
import type { CommandIo } from './command-io.js';
import { runDemoCommand } from './commands/demo/demo-command.js';
import { runEngineSendCommand, withEngines } from './commands/engines/engine-send-command.js';
import { runEngineWorkerCommand } from './commands/engines/engine-worker-command.js';
import { runEvalCommand } from './commands/eval-command.js';
import { runForkCommand } from './commands/fork-command.js';
import { runInspectCommand } from './commands/inspect-command.js';
import { runMcpCommand } from './commands/mcp-command.js';
import { runReplayCommand } from './commands/replay/replay-command.js';
import { runRunCommand } from './commands/run-command.js';
import { runSendCommand } from './commands/send-command.js';
import { runSessionsCommand } from './commands/sessions/sessions-command.js';
import { runValidateCommand } from './commands/validate-command.js';
import { runWorkerCommand } from './commands/worker-command.js';
import { packageRoot } from './package-root.js';
import { terminalSafe } from './terminal/terminal-safe.js';

const HELP = `agentloop: run tool-using LLM agents

Usage:
  agentloop demo                         run the example agents (scripted model unless OPENAI_API_KEY is set)
  agentloop run --bundle <root> --agent <id> [options] "<message>"
                                         one turn with a bundle agent: the answer on stdout, progress on stderr
  agentloop chat --bundle <root> --agent <id> [options]
                                         talk with a bundle agent; sessions are saved as you go
  agentloop chat --resume <id>           continue a saved session
  agentloop run|chat --mcp-config <file> without --bundle: a plain assistant with the MCP servers' tools
  agentloop mcp list|login <server>|logout <server>
                                         the project's MCP servers; sign in to remote ones (OAuth)
  agentloop mcp serve --bundle <root> --agent <id> [--http <port>] [--yes] [--allow <tool>]
                                         serve the agent as an MCP server, tool ask_<agent> (docs/mcp-server.md)
  agentloop sessions [--json]            list saved sessions
  agentloop sessions export <id> --format trajectory [--out <file>]
                                         a session's conversation as OpenAI messages (for eval tools)
  agentloop fork <session> --at <seq> [--model <id>] [--message "<text>"]
                                         copy a saved session up to a rest point into a new one
  agentloop replay <session-id|file.jsonl> [--tools recorded|live] [--match strict|sequential]
                                         run a saved session's agent again against its recording
                                         (exit 0 it matches, 1 it diverges, 2 bad input)
  agentloop validate <root> [--json]     check a bundle or an installed BMAD tree
  agentloop inspect [--inspector-port <port>] [--dir <dir>]
                                         the inspector page for sessions saved on disk
  agentloop worker --store <url-or-dir> --bundle <root> --agent <id> [--concurrency <n>]
                                         carry the sessions of a store (PostgreSQL or a folder); start several
  agentloop send --store <url-or-dir> --session <id> "<message>" [--wait]
                                         post to a session's inbox (also --approve/--reject <call>, --interrupt)
  agentloop worker|send --engine restate|dbos ...
                                         the same through a durable engine the team runs (docs/engines.md)
  agentloop serve --bundle <root> --agent <id> [--store <url-or-dir>] [--port <n>] [--token <bearer>]
                                         serve the agent over AG-UI (HTTP + SSE) on 127.0.0.1 (docs/serve.md)
  agentloop serve ... --a2a              also serve the agent to other agents over A2A (docs/a2a.md)
  agentloop a2a card <url> | a2a send <url> "<message>"
                                         a remote A2A agent: print its card, talk to it (docs/a2a.md)
  agentloop eval <suite.eval.yaml|dir> [--mode replay|live] [--trials <n>] [--report <file>] [--record]
                                         run eval suites: a line per case, then "N passed, N failed"
  agentloop help [<command>]             this text, or a command's options (also: <command> --help)
  agentloop --version                    the installed version

Inspector options:
  --inspector-port <port>  (demo, run, chat, inspect) serve the local inspector page on 127.0.0.1:<port>
  --inspect                (demo, run, chat) send the statechart to the Stately inspector (http://127.0.0.1:8080)

Model options (run, chat): --base-url <url> --model <id> --api-key <key> --scenario <file>
  --api <chat-completions|responses> (default chat-completions: every OpenAI-compatible server)
  Without them, OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL are used; with none of these, a bundle's
  scripted demo (scenarios/<agent>.yaml in the bundle) answers when it ships one.

Approvals (run, chat): calls that need approval (save_output, and tools that ask) are asked on the
  terminal; run without a terminal declines them; --yes approves every call.
`;

type Command = (args: string[], io: CommandIo) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  demo: runDemoCommand,
  run: runRunCommand,
  chat: runChatCommand,
  sessions: runSessionsCommand,
  validate: runValidateCommand,
  inspect: runInspectCommand,
  worker: withEngines(
    (args, io) => runWorkerCommand(args, io),
    (args, io) => runEngineWorkerCommand(args, io),
  ),
  serve: (args, io) => import('./commands/serve-command.js').then((m) => m.runServeCommand(args, io)),
  send: withEngines(runSendCommand, runEngineSendCommand),
  mcp: runMcpCommand,
  replay: runReplayCommand,
  eval: runEvalCommand,
  a2a: (args, io) => import('./commands/a2a-command.js').then((m) => m.runA2aCommand(args, io)),
  fork: runForkCommand,
};

/** The version in the package's package.json. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as {
    version?: unknown;
  };
  return String(manifest.version);
}

/** Runs the CLI with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === '-v' || first === 'version') {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  if (!first || first === 'help' || first === '--help' || first === '-h') {
    const topic = first === 'help' ? rest[0] : undefined;
    if (topic === undefined) {
      io.stdout(HELP);
      return 0;
    }
    if (!COMMANDS[topic]) return unknownCommand(topic, io);
    return main([topic, '--help'], io);
  }
  const name = first;
  const command = COMMANDS[name];
  if (!command) return unknownCommand(name, io);
  try {
    return await command(rest, io);
  } catch (error) {
    const usage = usageErrorOf(error);
    if (usage) {
      io.stderr(`agentloop ${name}: ${terminalSafe(usage.message)}; see agentloop ${name} --help\n`);
      return 2;
    }
    // A failure may quote a server's answer or a file: printed redacted and terminal-safe.
    const message = createRedactor().redact(error instanceof Error ? error.message : String(error));
    io.stderr(`agentloop ${name}: ${terminalSafe(message)}\n`);
    return 1;
  }
}

function unknownCommand(name: string, io: CommandIo): number {
  io.stderr(
    `agentloop: unknown command "${terminalSafe(name)}" (commands: ${Object.keys(COMMANDS).join(', ')}); see agentloop --help\n`,
  );
  return 2;
}

const isEntry = (() => {
  try {
    return realpathSync(process.argv[1] ?? '') === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
})();

if (isEntry) {
  const io: CommandIo = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
