import { createRedactor } from '../../events/redact.js';
import { UsageError } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { terminalSafe } from '../terminal/terminal-safe.js';

// What `agentloop send` shares between its two forms, through a store's inbox (send-command.ts) and
// through a durable engine (engines/engine-send-command.ts): the input flags, the one-input check and
// the report of where the session rests.

/** Exit codes of `agentloop send` (besides 0, 1 and 2 for bad flags). */
export const SEND_EXIT = { waitingApproval: 3, timeout: 4 } as const;

/** The flags naming the session, the one input and the wait, as `parseFlags` takes them. */
export const SEND_INPUT_OPTIONS = {
  session: { type: 'string' },
  approve: { type: 'string' },
  always: { type: 'boolean', default: false },
  reject: { type: 'string' },
  reason: { type: 'string' },
  interrupt: { type: 'boolean', default: false },
  wait: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The parsed values of {@link SEND_INPUT_OPTIONS}. */
export interface SendInputValues {
  session?: string | undefined;
  approve?: string | undefined;
  always?: boolean | undefined;
  reject?: string | undefined;
  reason?: string | undefined;
  interrupt?: boolean | undefined;
  wait?: boolean | undefined;
  timeout?: string | undefined;
}

/**
 * Checks that exactly one input is given (a message, `--approve`, `--reject` or `--interrupt`; none
 * with `--wait`, which then waits for the session's running turn to rest), that
 * `--always` and `--reason` go with their answer, `--timeout` with `--wait`, and that a session is
 * named; returns the message text (empty for the other inputs) and the session.
 */
export function checkSendInput(
  values: SendInputValues,
  positionals: string[],
): { text: string; session: string } {
  const text = positionals.join(' ');
  const inputs = [
    text.trim() !== '',
    values.approve !== undefined,
    values.reject !== undefined,
    values.interrupt === true,
  ];
  const given = inputs.filter(Boolean).length;
  if (given > 1 || (given === 0 && !values.wait)) {
    throw new UsageError(
      'give one of "<message>", --approve <id>, --reject <id> or --interrupt (or --wait alone)',
    );
  }
  if (values.always && values.approve === undefined) throw new UsageError('--always goes with --approve');
  if (values.reason !== undefined && values.reject === undefined)
    throw new UsageError('--reason goes with --reject');
  if (!values.session) throw new UsageError('missing --session <id>');
  if (values.timeout !== undefined && !values.wait) throw new UsageError('--timeout goes with --wait');
  return { text, session: values.session };
}

/** Where a session rests, as `--wait` reports it. */
export interface RestingSession {
  id: string;
  state: string;
  pendingApprovals: { toolCallId: string; name: string; args: unknown }[];
  response?: string | undefined;
  error?: string | undefined;
}

/**
 * Prints where a session rests: its reply on stdout, pending approvals or the error on stderr.
 * Returns the exit code (0, 1 for Error, {@link SEND_EXIT}'s `waitingApproval`).
 */
export function reportRest(view: RestingSession, io: CommandIo, show: (s: string) => string): number {
  if (view.state === 'WaitingApproval') {
    io.stderr(`session ${show(view.id)} waits for approval:\n`);
    for (const call of view.pendingApprovals) {
      const args = JSON.stringify(createRedactor().redactValue(call.args)) ?? '';
      io.stderr(`${show(call.toolCallId)} ${show(call.name)} ${terminalSafe(args)}\n`);
    }
    return SEND_EXIT.waitingApproval;
  }
  if (view.state === 'Error') {
    io.stderr(`session ${show(view.id)} ended in Error: ${show(view.error ?? 'unknown error')}\n`);
    return 1;
  }
  if (view.state === 'Interrupted') io.stderr(`session ${show(view.id)} was interrupted\n`);
  if (view.response) io.stdout(`${show(view.response)}\n`);
  return 0;
}
