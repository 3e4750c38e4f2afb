#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRedactor } from '../events/redact.js';
import { runChatCommand } from './chat-command.js';
import type { CommandIo } from './command-io.js';
import { runDemoCommand } from './demo-command.js';
import { runInspectCommand } from './inspect-command.js';
import { runRunCommand } from './run-command.js';
import { runSessionsCommand } from './sessions-command.js';
import { terminalSafe } from './terminal-safe.js';
import { runValidateCommand } from './validate-command.js';

const HELP = `agentloop: run tool-using LLM agents

Usage:
  agentloop demo                         run the example agents (scripted model unless OPENAI_API_KEY is set)
  agentloop run --bundle <root> --agent <id> [--json] "<message>"
                                         one turn with a bundle agent
  agentloop chat --bundle <root> --agent <id>
                                         talk with a bundle agent; sessions are saved as you go
  agentloop chat --resume <id>           continue a saved session
  agentloop sessions [--json]            list saved sessions
  agentloop validate <root> [--json]     check a bundle or an installed BMAD tree
  agentloop inspect [--dir <dir>]        the inspector page for sessions saved on disk
  agentloop help                         this text

Inspector options (demo, run): --inspector-port <port> serves the local inspector page;
  --inspect sends the statechart to the Stately inspector (http://127.0.0.1:8080).

Model options (run, chat): --base-url <url> --model <id> --api-key <key> --scenario <file>
  Without them, OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL are used.
`;

type Command = (args: string[], io: CommandIo) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  demo: runDemoCommand,
  run: runRunCommand,
  chat: runChatCommand,
  sessions: runSessionsCommand,
  validate: runValidateCommand,
  inspect: runInspectCommand,
};

/** Runs the CLI with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.stdout(HELP);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`agentloop: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    // A failure may quote a server's answer or a file: printed redacted and terminal-safe.
    const message = createRedactor().redact(error instanceof Error ? error.message : String(error));
    io.stderr(`agentloop ${name}: ${terminalSafe(message)}\n`);
    return 1;
  }
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
