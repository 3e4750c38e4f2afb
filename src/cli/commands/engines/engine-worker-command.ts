import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { type AgentOptions, toAgentOptions } from '../../../agent/agent-options.js';
import { AGENT_FLAG_OPTIONS, loadFlagAgent, SKILLS_USAGE } from '../../cli-agent.js';
import { cliApprovalPolicy } from '../../cli-approvals.js';
import { parseFlags, positiveInteger, UsageError } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import { redactConnectionString } from '../../flags/store-flag.js';
import { connectModel, MODEL_FLAG_OPTIONS, modelFlags, modelOptions } from '../../model/model-connection.js';
import { untilInterrupted } from '../../until-interrupted.js';
import { engineMissing } from './engine-send-command.js';

const USAGE = `Usage: agentloop worker --engine restate [--port <n>] [--register <admin-url>] --agent <id> [agent flags]
       agentloop worker --engine dbos --database <postgres-url> --agent <id> [agent flags]
  Serves the agent on a durable engine (docs/engines.md). restate: a Restate endpoint on 127.0.0.1
  (register it with restate, or give --register); each session is a virtual object named after the
  agent. dbos: a DBOS worker on the database (its system tables, the sessions table, one turn of a
  session at a time; turns of a killed worker are taken over). Start several: each turn runs once.
  --engine <restate|dbos>
  --port <n>            (restate) the endpoint's port (default 9080; 0 picks one)
  --register <url>      (restate) register the endpoint with Restate's admin API at <url>
  --database <url>      (dbos) postgres:// URL of DBOS's system database and the sessions table
  --project <dir> | --bundle <root>  --agent <id>  --output <dir>
                        the agent, as for agentloop worker --store
${SKILLS_USAGE}  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
                        the model (as for agentloop run)
Exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 could not start (engine, agent, model), 2 bad flags.
`;

/** `agentloop worker --engine ...`: the agent's service for Restate or DBOS. */
export async function runEngineWorkerCommand(
  args: string[],
  io: CommandIo,
  signal?: AbortSignal,
): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      engine: { type: 'string' },
      port: { type: 'string' },
      register: { type: 'string' },
      database: { type: 'string' },
      ...AGENT_FLAG_OPTIONS,
      ...MODEL_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  const engine = values.engine;
  if (engine !== 'restate' && engine !== 'dbos') throw new UsageError('--engine is restate or dbos');
  if (!values.agent) throw new UsageError('missing --agent <id> (the agent that runs the sessions)');
  if (engine === 'dbos' && !values.database)
    throw new UsageError('--engine dbos needs --database <postgres-url>');
  if (engine === 'restate' && values.database) throw new UsageError('--database goes with --engine dbos');
  if (engine === 'dbos' && (values.port || values.register))
    throw new UsageError('--port and --register go with --engine restate');
  const port = values.port === '0' ? 0 : positiveInteger(values.port, '--port', 9080);
  const { cliAgent, say } = await loadFlagAgent(values, io);
  const closers: (() => Promise<void>)[] = [];
  try {
    const connection = await connectModel(modelFlags(values), cliAgent.scripted);
    closers.push(() => connection.close());
    const options: AgentOptions = toAgentOptions(
      cliAgent.definition,
      {},
      { name: cliAgent.name, ...modelOptions(connection), approval: cliApprovalPolicy(false) },
    );
    const name = values.agent;
    let where: string;
    if (engine === 'restate') {
      const served = await serveRestate(name, options, port);
      closers.push(served.close);
      where = `Restate endpoint http://127.0.0.1:${served.port}, service "${name}"`;
      if (values.register) {
        await registerWithRestate(values.register, `http://127.0.0.1:${served.port}`);
        where += `, registered with ${values.register}`;
      }
    } else {
      const stop = await startDbosWorker(name, options, values.database!);
      closers.push(stop);
      where = `DBOS on ${redactConnectionString(values.database!)}`;
    }
    say(
      `agentloop worker (pid ${process.pid}): ${cliAgent.name} on ${where}; model: ${connection.description}. Ctrl-C stops.`,
    );
    await untilInterrupted(signal);
    say('stopping');
    return 0;
  } catch (error) {
    say(`agentloop worker: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    if (closers.length > 0) say('stopped');
  }
}

/** The agent as a Restate virtual object on an HTTP/2 endpoint on 127.0.0.1. */
async function serveRestate(name: string, options: AgentOptions, port: number) {
  const restate = await import('../../../engines/restate/index.js').catch(
    engineMissing('@restatedev/restate-sdk'),
  );
  const sdk = await import('@restatedev/restate-sdk');
  const server = http2.createServer(
    sdk
      .endpoint()
      .bind(restate.restateAgent(name, () => options))
      .http2Handler(),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}

async function registerWithRestate(admin: string, uri: string): Promise<void> {
  const base = admin.replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${base}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri, force: true }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    throw new Error(`cannot reach Restate's admin API at ${base} to register ${uri}: ${cause}`);
  }
  if (!response.ok) {
    throw new Error(
      `Restate at ${base} refused to register ${uri} (HTTP ${response.status}): ${await response.text()}`,
    );
  }
}

/** A DBOS worker for the agent: launch, the queue and sessions table, and the takeover of dead workers. */
async function startDbosWorker(
  name: string,
  options: AgentOptions,
  database: string,
): Promise<() => Promise<void>> {
  const dbos = await import('../../../engines/dbos/index.js').catch(engineMissing('@dbos-inc/dbos-sdk pg'));
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: database, max: 4, connectionTimeoutMillis: 10_000 });
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => {});
    throw new Error(
      `cannot reach PostgreSQL at ${redactConnectionString(database)}: ${(error as Error).message}`,
    );
  }
  const agent = dbos.dbosAgent(name, () => options, { pool });
  DBOS.setConfig({
    name: 'agentloop',
    systemDatabaseUrl: database,
    executorID: dbos.dbosExecutorId(),
    logLevel: 'error',
  });
  await DBOS.launch();
  await agent.start();
  const recovery = await dbos.startDbosRecovery({ pool, queues: [agent.queue] });
  return async () => {
    await recovery.stop();
    await DBOS.shutdown();
    await pool.end();
  };
}
