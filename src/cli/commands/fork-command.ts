import { ForkError, forkSession } from '../../evals/fork-session.js';
import { SessionStoreError } from '../../session/session-store-error.js';
import { parseFlags, UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { openSavedSessions, SAVED_SESSIONS_FLAG_OPTIONS, SAVED_SESSIONS_USAGE } from '../flags/store-flag.js';
import { terminalSafe } from '../terminal/terminal-safe.js';

const USAGE = `Usage: agentloop fork <session> --at <seq> [--model <id>] [--system <text>] [--message "<text>"]
  Copies a saved session up to its transcript entry <seq> into a new session and prints the new id.
  The cut must be a rest point: after a user message, after the last result of a tool batch (before a
  model call) or after a final answer; the inspector's transcript view shows them. Nothing of the
  original changes, and no tool before the cut runs again. Continue the fork with
  agentloop chat --resume <new-id> (/continue goes on from the cut).
  --at <seq>            the last transcript entry the fork keeps
  --model <id>          the model the fork runs on (remembered: chat --resume uses it)
  --system <text>       replaces the system prompt in the fork
  --message <text>      the fork's next user message
${SAVED_SESSIONS_USAGE}Exit codes: 0 forked, 1 the store failed, 2 bad input (an unknown session, a bad --at, a cut that
  is not a rest point: one line says why).
`;

/** `agentloop fork`: forks a saved session at a rest point (docs/evals.md, "Fork"). */
export async function runForkCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      ...SAVED_SESSIONS_FLAG_OPTIONS,
      at: { type: 'string' },
      model: { type: 'string' },
      system: { type: 'string' },
      message: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError('give one session id: agentloop fork <session> --at <seq>');
  if (values.at === undefined) throw new UsageError('missing --at <seq> (the transcript entry to cut after)');
  const at = /^\s*\d+\s*$/.test(values.at) ? Number(values.at) : Number.NaN;
  if (!Number.isSafeInteger(at) || at < 1)
    throw new UsageError(`--at needs a transcript entry seq (a whole number above 0), got "${values.at}"`);
  const opened = await openSavedSessions(values);
  try {
    const fork = await forkSession(opened.store, positionals[0]!, {
      at,
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(values.system !== undefined ? { system: values.system } : {}),
      ...(values.message !== undefined ? { message: values.message } : {}),
    });
    io.stdout(`${fork.id}\n`);
    return 0;
  } catch (error) {
    const refused =
      error instanceof ForkError || (error instanceof SessionStoreError && error.code === 'invalid_id');
    if (!refused) throw error;
    io.stderr(`agentloop fork: ${terminalSafe(error.message)}\n`);
    return 2;
  } finally {
    await opened.close();
  }
}
