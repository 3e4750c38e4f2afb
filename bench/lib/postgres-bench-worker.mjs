// A worker process for bench/postgres-persistence.mjs: one instant tool, the bench's concurrency, the default
// poll interval (wakeups come by LISTEN/NOTIFY). Prints `ready`, and on SIGTERM its statement counts
// and CPU time since ready (or since SIGUSR2) as one JSON line, then exits.
import { z } from 'zod';
import { defineTool, startWorker } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';
import { countingPool, countsByKind } from './counting-pool.mjs';

const config = JSON.parse(process.argv[2]);
const counts = {};
const pool = countingPool(config.url, 8, counts);
const store = new PostgresSessionStore({ pool }, { schema: config.schema });
const lookup = defineTool({
  name: 'lookup',
  description: 'lookup',
  parameters: z.object({ item: z.string() }),
  execute: ({ item }) => `found ${item}`,
});
startWorker({
  store,
  ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
  agent: () => ({ baseURL: config.baseURL, apiKey: 'bench', tools: [lookup], loopControlTools: false }),
});
let atReady;
process.on('SIGTERM', () => {
  const cpu = process.cpuUsage(atReady);
  process.stdout.write(
    `${JSON.stringify({ counts: countsByKind(counts), cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`,
  );
  process.exit(0);
});
atReady = process.cpuUsage();
// SIGUSR2: the timed part starts (counts and CPU from now on).
process.on('SIGUSR2', () => {
  atReady = process.cpuUsage();
  for (const key of Object.keys(counts)) delete counts[key];
});
process.stdout.write('ready\n');
