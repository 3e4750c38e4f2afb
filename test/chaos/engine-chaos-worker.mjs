// One chaos worker process on a durable engine (run-engine-chaos.mjs): the chaos agent served as a
// Restate endpoint (on an OS-chosen port, printed as `ready <port>`) or run as a DBOS worker (with
// the takeover of dead workers), its sessions kept in the PostgreSQL session store as well. The tools
// count their own runs as the built-in workers' chaos worker does. Killed with SIGKILL at random.
import http2 from 'node:http2';
import pg from 'pg';
import { PostgresSessionStore } from '../../dist/postgres/index.js';
import { chaosTools } from './chaos-load.mjs';

const config = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: config.url, max: 6 });
const store = new PostgresSessionStore({ pool }, { schema: config.schema });
const tools = chaosTools(config);
const options = () => ({
  name: 'chaos',
  baseURL: config.baseURL,
  apiKey: 'chaos',
  tools,
  retry: { maxAttempts: 8 },
});

if (config.engine === 'restate') {
  process.env.RESTATE_LOGGING ??= 'ERROR';
  const restate = await import('@restatedev/restate-sdk');
  const { restateAgent } = await import('../../dist/engines/restate/index.js');
  const agent = restateAgent('chaos', options, { store });
  const server = http2.createServer(restate.endpoint().bind(agent).http2Handler());
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${server.address().port}\n`));
} else {
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const { dbosAgent, dbosExecutorId, startDbosRecovery } = await import('../../dist/engines/dbos/index.js');
  const agent = dbosAgent('chaos', options, { pool, store, queuePollMs: 100 });
  const executorId = dbosExecutorId();
  DBOS.setConfig({
    name: 'agentloop-chaos',
    systemDatabaseUrl: config.url,
    executorID: executorId,
    logLevel: 'error',
  });
  await startDbosRecovery({ pool, queues: [agent.queue], leaseMs: config.leaseMs, executorId });
  await DBOS.launch();
  await agent.start();
  process.stdout.write('ready\n');
}
