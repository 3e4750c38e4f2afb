// A worker process for bench/postgres-persistence.mjs: one instant tool, concurrency 8.
import { z } from 'zod';
import { defineTool, startWorker } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';

const config = JSON.parse(process.argv[2]);
const store = new PostgresSessionStore({ connectionString: config.url, max: 8 }, { schema: config.schema });
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
process.stdout.write('ready\n');
