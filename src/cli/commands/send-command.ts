import { createRedactor } from '../../events/redact.js';
import { createSessionClient, type SessionView } from '../../workers/session-client.js';
import { parseFlags, positiveInteger } from '../cli-args.js';
import type { CommandIo } from '../command-io.js';
import { openCliStore, STORE_FLAG_OPTIONS, STORE_USAGE } from '../flags/store-flag.js';
import { terminalSafe } from '../terminal/terminal-safe.js';
import { checkSendInput, reportRest, SEND_EXIT, SEND_INPUT_OPTIONS } from './send-input.js';

const USAGE = `Usage: agentloop send --store <url-or-dir> --session <id> "<message>" [--wait [--timeout <s>]]
       agentloop send --store <url-or-dir> --session <id> --approve <tool-call-id> [--always] [--wait]
       agentloop send --store <url-or-dir> --session <id> --reject <tool-call-id> [--reason <text>] [--wait]
       agentloop send --store <url-or-dir> --session <id> --interrupt [--wait]
       agentloop send --store <url-or-dir> --session <id> --wait
  Posts an input to a session's inbox; a worker (agentloop worker) on the same store applies it. A
  message to an unknown id creates the session.
${STORE_USAGE}  --session <id>        the session
  --approve <id>        answer a call that waits for approval (ids are listed by --wait)
  --always              with --approve: approve this tool for the rest of the session
  --reject <id>         decline a call that waits for approval; --reason <text> tells the model why
  --interrupt           stop the session's running turn
  --wait                wait until the session rests: its last reply on stdout; calls waiting for
                        approval on stderr, one a line: <tool-call-id> <tool> <arguments>; alone (no
                        input), waits for the running turn
  --timeout <s>         how long --wait waits (default 120)
Exit codes: 0 posted (with --wait: the session rests), 1 not applied (the call was answered already
  or is not waiting; the turn ended in an error; the store failed), 2 bad flags,
  ${SEND_EXIT.waitingApproval} (--wait) the session waits for approval, ${SEND_EXIT.timeout} (--wait) it did not rest in time.
       agentloop send --engine restate|dbos ... (the same through a durable engine: agentloop send
  --engine restate --help; docs/engines.md)
`;

/** `agentloop send`: posts a message, an approval answer or an interrupt to a session's inbox. */
export async function runSendCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      ...STORE_FLAG_OPTIONS,
      ...SEND_INPUT_OPTIONS,
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const { text, session: id } = checkSendInput(values, positionals);
  const timeoutMs = positiveInteger(values.timeout, '--timeout', 120) * 1000;
  const opened = await openCliStore(values);
  try {
    const client = createSessionClient({ store: opened.store, pollMs: 100 });
    const show = (s: string) => terminalSafe(createRedactor().redact(s));
    const callId = values.approve ?? values.reject;
    if (callId !== undefined) {
      const before = await client.get(id);
      const taken =
        values.approve !== undefined
          ? await client.approve(id, callId, values.always ? { always: true } : {})
          : await client.reject(id, callId, values.reason);
      if (!taken) {
        const answered =
          before?.pendingApprovals.some((p) => p.toolCallId === callId) ||
          before?.messages.some((m) => m.role === 'tool' && m.tool_call_id === callId);
        io.stderr(
          `agentloop send: tool call ${show(callId)} of session ${show(id)} ${
            answered ? 'was answered already (the first answer counts)' : 'is not waiting for approval'
          }\n`,
        );
        return 1;
      }
    } else if (values.interrupt) await client.interrupt(id);
    else if (text.trim() !== '') await client.send(id, text);
    if (!values.wait) {
      io.stderr(`posted to session ${show(id)} in ${opened.description}\n`);
      return 0;
    }
    let view: SessionView;
    try {
      view = await client.waitFor(id, { timeoutMs });
    } catch (error) {
      io.stderr(`agentloop send: ${show((error as Error).message)} (is a worker running on this store?)\n`);
      return SEND_EXIT.timeout;
    }
    const { response, error } = view.lastResult;
    return reportRest({ ...view, response, error: error ?? undefined }, io, show);
  } finally {
    await opened.close();
  }
}
