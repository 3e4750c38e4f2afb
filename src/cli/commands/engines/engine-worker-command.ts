import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { type AgentOptions, toAgentOptions } from '../../../agent/agent-options.js';
import type { SessionStore } from '../../../session/session-store.js';
import { AGENT_FLAG_OPTIONS, loadFlagAgent, projectFolder, SKILLS_USAGE } from '../../cli-agent.js';
import { cliApprovalPolicy } from '../../cli-approvals.js';
import { parseFlags, positiveInteger, UsageError } from '../../cli-args.js';
import type { CommandIo } from '../../command-io.js';
import { MCP_CONFIG_FLAG, serviceMcpOptions } from '../../flags/mcp-config-flag.js';
import { openCliStore, redactConnectionString, STORE_FLAG_OPTIONS } from '../../flags/store-flag.js';
import { connectModel, MODEL_FLAG_OPTIONS, modelFlags, modelOptions } from '../../model/model-connection.js';
import { untilInterrupted } from '../../until-interrupted.js';
import { engineMissing } from './engine-send-command.js';

const USAGE = `Usage: agentloop worker --engine restate [--port <n>] [--register <admin-url>] [--store <url-or-dir>] --agent <id> [agent flags]
       agentloop worker --engine dbos --database <postgres-url> [--store <url-or-dir>] --agent <id> [agent flags]
  Serves the agent on a durable engine (docs/engines.md). restate: a Restate endpoint on 127.0.0.1
  (register it with restate, or give --register); each session is a virtual object named after the
  agent. dbos: a DBOS worker on the database (its system tables, the sessions table, one turn of a
  session at a time; turns of a killed worker are taken over). Start several: each turn runs once.
  --engine <restate|dbos>
  --port <n>            (restate) the endpoint's port (default 9080; 0 picks one)
  --register <url>      (restate) register the endpoint with Restate's admin API at <url>
  --database <url>      (dbos) postgres:// URL of DBOS's system database and the sessions table
  --store <url-or-dir>  a session store the sessions are kept in as well, for agentloop sessions,
                        replay and fork: a postgres:// URL (--schema <name>) or a folder. dbos: by
                        default the PostgreSQL store on --database; restate: none unless given
  --project <dir> | --bundle <root>  --agent <id>  --output <dir>
                        the agent, as for agentloop worker --store
${SKILLS_USAGE}  --mcp-config <file>   an mcp.json ({ "mcpServers": { ... } }): the servers' tools join the agent's
                        (repeat for more files; the project's .mcp.json is read first when present)
  --base-url <url> --model <id> --api-key <key> --scenario <file> --api <chat-completions|responses>
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
      ...STORE_FLAG_OPTIONS,
      ...AGENT_FLAG_OPTIONS,
      ...MCP_CONFIG_FLAG,
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
  if (values.schema !== undefined && !values.store) throw new UsageError('--schema goes with --store');
  const { cliAgent, say } = await loadFlagAgent(values, io);
  const withMcp = await serviceMcpOptions(values['mcp-config'], projectFolder(values.project), say);
  const closers: (() => Promise<void>)[] = [];
  try {
    // The session store: --store, else (dbos) the PostgreSQL store on the engine's database.
    const storeFlag = values.store ?? (engine === 'dbos' ? values.database : undefined);
    let store: SessionStore | undefined;
    let kept = '';
    if (storeFlag) {
      const opened = await openCliStore({ store: storeFlag, schema: values.schema });
      closers.push(() => opened.close());
      store = opened.store;
      kept = `; sessions kept in ${opened.description}`;
    }
    const connection = await connectModel(modelFlags(values), cliAgent.scripted);
    closers.push(() => connection.close());
    const options: AgentOptions = toAgentOptions(
      cliAgent.definition,
      {},
      { name: cliAgent.name, ...modelOptions(connection), approval: cliApprovalPolicy(false), ...withMcp },
    );
    const name = values.agent;
    let where: string;
    if (engine === 'restate') {
      const served = await serveRestate(name, options, port, store);
      closers.push(served.close);
      where = `Restate endpoint http://127.0.0.1:${served.port}, service "${name}"`;
      if (values.register) {
        await registerWithRestate(values.register, `http://127.0.0.1:${served.port}`);
        where += `, registered with ${values.register}`;
      }
    } else {
      const stop = await startDbosWorker(name, options, values.database!, store);
      closers.push(stop);
      where = `DBOS on ${redactConnectionString(values.database!)}`;
    }
    say(
      `agentloop worker (pid ${process.pid}): ${cliAgent.name} on ${where}${kept}; model: ${connection.description}. Ctrl-C stops.`,
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
async function serveRestate(name: string, options: AgentOptions, port: number, store?: SessionStore) {
  const restate = await import('../../../engines/restate/index.js').catch(
    engineMissing('@restatedev/restate-sdk'),
  );
  const sdk = await import('@restatedev/restate-sdk');
  const server = http2.createServer(
    sdk
      .endpoint()
      .bind(restate.restateAgent(name, () => options, store ? { store } : {}))
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
  store?: SessionStore,
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
  const agent = dbos.dbosAgent(name, () => options, { pool, ...(store ? { store } : {}) });
  const executorId = dbos.dbosExecutorId();
  DBOS.setConfig({
    name: 'agentloop',
    systemDatabaseUrl: database,
    executorID: executorId,
    logLevel: 'error',
  });
  // The lease before launch: a launched worker dequeues turns at once (docs/engines.md).
  const recovery = await dbos.startDbosRecovery({ pool, queues: [agent.queue], executorId });
  try {
    await DBOS.launch();
    await agent.start();
  } catch (error) {
    await recovery.stop();
    await pool.end().catch(() => {});
    throw error;
  }
  return async () => {
    await recovery.stop();
    await DBOS.shutdown();
    await pool.end();
  };
}
