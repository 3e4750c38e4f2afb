import { createRedactor } from '../../../events/redact.js';
import { parseFlags, positiveInteger, UsageError } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import { terminalSafe } from '../../terminal/terminal-safe.js';
import { checkSendInput, reportRest, SEND_EXIT, SEND_INPUT_OPTIONS } from '../send-input.js';

const USAGE = `Usage: agentloop send --engine restate --url <ingress-url> --agent <id> --session <id> "<message>" [--wait]
       agentloop send --engine dbos --database <postgres-url> --agent <id> --session <id> "<message>" [--wait]
       ... --approve <tool-call-id> [--always] | --reject <tool-call-id> [--reason <text>] | --interrupt
       ... --wait (alone: waits for the session's running turn to rest; after the engine was away too)
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
  interrupt(sessionId: string): Promise<boolean>;
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
      ...SEND_INPUT_OPTIONS,
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
  const { text, session: id } = checkSendInput(values, positionals);
  const timeoutMs = positiveInteger(values.timeout, '--timeout', 120) * 1000;
  const show = (s: string) => terminalSafe(createRedactor().redact(s));
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
    else if (values.interrupt) {
      if (!(await client.interrupt(id))) {
        io.stderr(`agentloop send: no turn of session ${show(id)} runs (${engine}): nothing to interrupt\n`);
        return 1;
      }
    } else if (text.trim() !== '') await client.post(id, text);
    if (!values.wait) {
      io.stderr(`posted to session ${show(id)} (${engine})\n`);
      return 0;
    }
    const end = Date.now() + timeoutMs;
    for (;;) {
      const view = await client.state(id);
      const moved = text.trim() !== '' ? view.turn > before.turn : true;
      const answered = callId === undefined || !view.pendingApprovals.some((p) => p.toolCallId === callId);
      if (moved && answered && view.state !== 'Thinking') return reportRest({ ...view, id }, io, show);
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
