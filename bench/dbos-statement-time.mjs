// Issue 36: the wall time a DBOS turn spends in the adapter's own statements (the application pool:
// the sessions and interrupts tables), per turn and per statement, the part of a turn that is
// agentloop's and not DBOS's. With `--b=<dist>` the dbosAgent of another build runs too, its turns
// interleaved with this build's on the same DBOS (before/after in one process; that build must resolve
// this `@dbos-inc/dbos-sdk`: link its node_modules/@dbos-inc here). The interrupt watch's polls run
// on a timer beside the turn, not in it, and are left out.
// npm run build && node bench/dbos-statement-time.mjs [--sessions=20] [--b=/path/to/other/dist]
import path from 'node:path';
import pg from 'pg';
import { benchArgs, startBenchCluster } from './lib/engine-bench.mjs';
import { closeShapes, shapeOf, shapeOptions, startShapes } from './lib/engine-shapes.mjs';

const args = benchArgs();
const sessions = Number(args.sessions ?? 20);
const { DBOS } = await import('@dbos-inc/dbos-sdk');
const builds = { a: await import('../dist/engines/dbos/index.js') };
if (args.b) builds.b = await import(path.resolve(args.b, 'engines/dbos/index.js'));
const shapes = await startShapes();
const cluster = await startBenchCluster();
const url = new URL(await cluster.database('statement_time'));

/** The turn running now: its build, and the ms and statements charged to it. */
let current;
/** ms of each statement, by build and the statement's first words. */
const byStatement = {};
const timedPool = (build) => {
  const pool = new pg.Pool({ connectionString: url.href, max: 4 });
  const query = pool.query.bind(pool);
  pool.query = async (...a) => {
    const text = typeof a[0] === 'string' ? a[0] : a[0].text;
    const start = performance.now();
    try {
      return await query(...a);
    } finally {
      if (current?.build === build && !/workflow_id = ANY/.test(text)) {
        const ms = performance.now() - start;
        current.ms += ms;
        current.statements++;
        const key = `${build} ${text.replace(/\s+/g, ' ').trim().slice(0, 48)}`;
        byStatement[key] ??= [];
        byStatement[key].push(ms);
      }
    }
  };
  return pool;
};
const options = (id) => shapeOptions(shapes, shapeOf(id));
const pools = [];
const agents = {};
for (const [build, lib] of Object.entries(builds)) {
  const pool = timedPool(build);
  pools.push(pool);
  agents[build] = lib.dbosAgent(`st${build}`, options, { pool, queuePollMs: 20, schema: `st_${build}` });
}
DBOS.setConfig({ name: 'statement-time', systemDatabaseUrl: url.href, logLevel: 'error' });
await DBOS.launch();
for (const agent of Object.values(agents)) await agent.start();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  console.log(`ms per turn in the adapter's statements (median of ${sessions} turns; a: ../dist, b: --b):`);
  for (const shape of ['text', 'chain']) {
    const turns = Object.fromEntries(Object.keys(agents).map((b) => [b, []]));
    for (let i = 0; i < sessions + 2; i++) {
      const order = i % 2 ? Object.keys(agents) : Object.keys(agents).reverse();
      for (const build of order) {
        current = { build, ms: 0, statements: 0 };
        const workflowId = await agents[build].post(`${shape}.${build}${i}`, 'go');
        await DBOS.retrieveWorkflow(workflowId).getResult({ pollingIntervalMs: 20 });
        if (i >= 2) turns[build].push(current);
        current = undefined;
      }
    }
    for (const [build, list] of Object.entries(turns)) {
      const ms = median(list.map((t) => t.ms)).toFixed(2);
      console.log(`  ${shape} ${build}: ${list[0].statements} statements, ${ms} ms`);
    }
  }
  console.log('ms per statement (median):');
  for (const [key, xs] of Object.entries(byStatement)) console.log(`  ${median(xs).toFixed(2)}  ${key}`);
} finally {
  await DBOS.shutdown();
  for (const pool of pools) await pool.end();
  await cluster.stop();
  await closeShapes(shapes);
}
