import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { trajectoryMessages } from '../../../evals/trajectory-messages.js';
import { assertValidSessionId } from '../../../session/session-store.js';
import { SessionStoreError } from '../../../session/session-store-error.js';
import { parseFlags, UsageError } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import {
  openSavedSessions,
  SAVED_SESSIONS_FLAG_OPTIONS,
  SAVED_SESSIONS_USAGE,
} from '../../flags/store-flag.js';
import { terminalSafe } from '../../terminal/terminal-safe.js';

export const SESSIONS_EXPORT_USAGE = `Usage: agentloop sessions export <id> --format trajectory [--out <file>]
  Writes a saved session's conversation as an OpenAI-messages trajectory: one JSON array of
  messages (system, user, assistant with tool_calls, tool with tool_call_id), the input other eval
  tools read. Read from the transcript, so redacted as it was written.
  --format trajectory   the format (the only one so far)
  --out <file>          write to this file (default: stdout)
${SAVED_SESSIONS_USAGE}Exit codes: 0 written, 1 the store or the file failed, 2 bad input (an unknown session, a bad flag).
`;

const FORMATS = ['trajectory'] as const;

/** `agentloop sessions export`: a saved session in a format other tools read. */
export async function runSessionsExportCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      ...SAVED_SESSIONS_FLAG_OPTIONS,
      format: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(SESSIONS_EXPORT_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('give one session id: agentloop sessions export <id>');
  if (!FORMATS.includes(values.format as (typeof FORMATS)[number]))
    throw new UsageError(
      values.format === undefined
        ? 'missing --format trajectory'
        : `--format "${values.format}" is not known (formats: ${FORMATS.join(', ')})`,
    );
  const id = positionals[0]!;
  const refuse = (why: string) => {
    io.stderr(`agentloop sessions export: ${terminalSafe(why)}\n`);
    return 2;
  };
  try {
    assertValidSessionId(id);
  } catch (error) {
    if (error instanceof SessionStoreError) return refuse(error.message);
    throw error;
  }
  const opened = await openSavedSessions(values);
  try {
    const { entries } = await opened.store.readTranscript(id);
    if (entries.length === 0) return refuse(`no session "${id}" with a transcript in ${opened.description}`);
    const text = `${JSON.stringify(trajectoryMessages(entries), null, 2)}\n`;
    if (values.out === undefined) io.stdout(text);
    else await writeFile(path.resolve(values.out), text);
    return 0;
  } finally {
    await opened.close();
  }
}
