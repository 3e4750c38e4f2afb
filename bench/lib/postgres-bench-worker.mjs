// A worker process for bench/postgres-persistence.mjs: one instant tool, concurrency 8. Prints
// `ready`, and on SIGTERM its statement counts and CPU time as one JSON line, then exits.
import { z } from 'zod';
import { defineTool, startWorker } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';
import { countingPool } from './counting-pool.mjs';

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
  concurrency: 8,
  pollMs: 50,
  agent: () => ({ baseURL: config.baseURL, apiKey: 'bench', tools: [lookup], loopControlTools: false }),
});
process.on('SIGTERM', () => {
  const cpu = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ counts, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
  process.exit(0);
});
process.stdout.write('ready\n');
