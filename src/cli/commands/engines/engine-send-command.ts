import { createRedactor } from '../../../events/redact.js';
import { parseFlags, positiveInteger, UsageError } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import { terminalSafe } from '../../terminal/terminal-safe.js';
import { SEND_EXIT } from '../send-command.js';

const USAGE = `Usage: agentloop send --engine restate --url <ingress-url> --agent <id> --session <id> "<message>" [--wait]
       agentloop send --engine dbos --database <postgres-url> --agent <id> --session <id> "<message>" [--wait]
       ... --approve <tool-call-id> [--always] | --reject <tool-call-id> [--reason <text>] | --interrupt
  Posts an input to a session of an agent served by agentloop worker --engine (docs/engines.md).
  --url <url>           (restate) Restate's ingress, e.g. http://127.0.0.1:8080
  --database <url>      (dbos) DBOS's system database
  --wait                wait until the session rests: the reply on stdout; calls waiting for approval
                        on stderr, one a line: <tool-call-id> <tool> <arguments>
  --timeout <s>         how long --wait waits (default 120)
Exit codes: 0 posted (with --wait: the session rests), 1 not applied or the engine failed, 2 bad flags,
  ${SEND_EXIT.waitingApproval} (--wait) the session waits for approval, ${SEND_EXIT.timeout} (--wait) it did not rest in time.
`;

/** Where a session stands, as both engines' clients tell it. */
interface EngineView {
  state: string;
  turn: number;
  pendingApprovals: { toolCallId: string; name: string; args: unknown }[];
  response?: string;
  error?: string;
}

/** One engine's client, reduced to what `send` does. */
interface EngineClient {
  post(sessionId: string, text: string): Promise<unknown>;
  approve(sessionId: string, toolCallId: string, options: { always?: boolean }): Promise<unknown>;
  reject(sessionId: string, toolCallId: string, reason?: string): Promise<unknown>;
  interrupt(sessionId: string): Promise<unknown>;
  state(sessionId: string): Promise<EngineView>;
  close(): Promise<void>;
}

/** `agentloop send --engine ...`: a message, an answer or an interrupt through Restate or DBOS. */
export async function runEngineSendCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      engine: { type: 'string' },
      url: { type: 'string' },
      database: { type: 'string' },
      agent: { type: 'string' },
      session: { type: 'string' },
      approve: { type: 'string' },
      always: { type: 'boolean', default: false },
      reject: { type: 'string' },
      reason: { type: 'string' },
      interrupt: { type: 'boolean', default: false },
      wait: { type: 'boolean', default: false },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const engine = values.engine;
  if (engine !== 'restate' && engine !== 'dbos') throw new UsageError('--engine is restate or dbos');
  if (engine === 'restate' && !values.url) throw new UsageError('--engine restate needs --url <ingress-url>');
  if (engine === 'dbos' && !values.database)
    throw new UsageError('--engine dbos needs --database <postgres-url>');
  if (!values.agent) throw new UsageError('missing --agent <id>');
  if (!values.session) throw new UsageError('missing --session <id>');
  const text = positionals.join(' ');
  const inputs = [
    text.trim() !== '',
    values.approve !== undefined,
    values.reject !== undefined,
    values.interrupt,
  ];
  if (inputs.filter(Boolean).length !== 1) {
    throw new UsageError('give one of "<message>", --approve <id>, --reject <id> or --interrupt');
  }
  const timeoutMs = positiveInteger(values.timeout, '--timeout', 120) * 1000;
  const show = (s: string) => terminalSafe(createRedactor().redact(s));
  const id = values.session;
  let client: EngineClient;
  try {
    client = await openClient(engine, values.agent, values.url, values.database);
  } catch (error) {
    io.stderr(`agentloop send: ${show(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  }
  try {
    const before = await client.state(id);
    const callId = values.approve ?? values.reject;
    if (values.approve !== undefined)
      await client.approve(id, values.approve, values.always ? { always: true } : {});
    else if (values.reject !== undefined) await client.reject(id, values.reject, values.reason);
    else if (values.interrupt) await client.interrupt(id);
    else await client.post(id, text);
    if (!values.wait) {
      io.stderr(`posted to session ${show(id)} (${engine})\n`);
      return 0;
    }
    const end = Date.now() + timeoutMs;
    for (;;) {
      const view = await client.state(id);
      const moved = text.trim() !== '' ? view.turn > before.turn : true;
      const answered = callId === undefined || !view.pendingApprovals.some((p) => p.toolCallId === callId);
      if (moved && answered && view.state !== 'Thinking') return report(id, view, io, show);
      if (Date.now() > end) {
        io.stderr(
          `agentloop send: session ${show(id)} did not rest in ${timeoutMs / 1000} s (is a worker running?)\n`,
        );
        return SEND_EXIT.timeout;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    io.stderr(`agentloop send: ${show(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  } finally {
    await client.close();
  }
}

async function openClient(
  engine: 'restate' | 'dbos',
  agent: string,
  url: string | undefined,
  database: string | undefined,
): Promise<EngineClient> {
  if (engine === 'restate') {
    const { restateClient } = await import('../../../engines/restate/index.js').catch(
      engineMissing('@restatedev/restate-sdk'),
    );
    const client = restateClient({ url: url!, agent });
    return { ...client, close: async () => {} };
  }
  const { dbosClient } = await import('../../../engines/dbos/index.js').catch(
    engineMissing('@dbos-inc/dbos-sdk pg'),
  );
  return dbosClient({ systemDatabaseUrl: database!, agent });
}

/** Prints where a session rests: its reply on stdout, pending approvals or the error on stderr. */
function report(id: string, view: EngineView, io: CommandIo, show: (s: string) => string): number {
  if (view.state === 'WaitingApproval') {
    io.stderr(`session ${show(id)} waits for approval:\n`);
    for (const call of view.pendingApprovals) {
      const args = JSON.stringify(createRedactor().redactValue(call.args)) ?? '';
      io.stderr(`${show(call.toolCallId)} ${show(call.name)} ${terminalSafe(args)}\n`);
    }
    return SEND_EXIT.waitingApproval;
  }
  if (view.state === 'Error') {
    io.stderr(`session ${show(id)} ended in Error: ${show(view.error ?? 'unknown error')}\n`);
    return 1;
  }
  if (view.state === 'Interrupted') io.stderr(`session ${show(id)} was interrupted\n`);
  if (view.response) io.stdout(`${show(view.response)}\n`);
  return 0;
}

/** Runs `engine` for arguments with `--engine`, `plain` for the others (worker and send keep one name). */
export function withEngines(
  plain: (args: string[], io: CommandIo) => Promise<number>,
  engine: (args: string[], io: CommandIo) => Promise<number>,
): (args: string[], io: CommandIo) => Promise<number> {
  return (args, io) =>
    (args.some((a) => a === '--engine' || a.startsWith('--engine=')) ? engine : plain)(args, io);
}

/** The error for an engine whose SDK is not installed: one line naming what to install. */
export function engineMissing(packages: string) {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(`this engine needs: npm install ${packages}`);
    }
    throw error;
  };
}
