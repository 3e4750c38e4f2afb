// One chaos worker process: startWorker on the shared database with tools that count their own runs
// (a line per start and end, appended to one file shared by every process). Killed with SIGKILL at
// random moments by run-chaos.mjs.
import { startWorker } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';
import { chaosTools } from './chaos-load.mjs';

const config = JSON.parse(process.argv[2]);
const store = new PostgresSessionStore({ connectionString: config.url, max: 6 }, { schema: config.schema });
const tools = chaosTools({ counter: config.counter });
const worker = startWorker({
  store,
  concurrency: config.concurrency,
  leaseMs: config.leaseMs,
  pollMs: 100,
  agent: () => ({ baseURL: config.baseURL, apiKey: 'chaos', tools, retry: { maxAttempts: 8 } }),
  onError: (error, id) =>
    process.stderr.write(`worker ${process.pid} session ${id}: ${error?.message ?? error}\n`),
});
process.on('SIGTERM', () => {
  void worker
    .stop()
    .then(() => store.close())
    .then(() => process.exit(0));
});
process.stdout.write('ready\n');
