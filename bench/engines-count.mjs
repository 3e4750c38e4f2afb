// Counts the engine work of one turn (issue 36): Restate journal entries by kind per invocation (from
// the admin API's `sys_journal`, journals kept for an hour), DBOS step rows and PostgreSQL commits and
// WAL flushes per turn (from `pg_stat_database` / `pg_stat_wal`), for the adapter and for the bare
// engine taking the adapter's effect steps in the turn's shape (engine-shapes.mjs `BARE_PLANS`), with each
// DBOS step's name and record bytes in order; and on DBOS the hand-written loop (`hand`, keeping its
// session's messages in a table as the adapter keeps its snapshot), with the bytes of the session's
// row each leaves. Counts, not times: they do not move with the load.
// npm run build && node bench/engines-count.mjs [--only=restate,dbos]

import { countingPool } from './lib/counting-pool.mjs';
import { benchArgs, onlyOf, startBenchCluster } from './lib/engine-bench.mjs';
import {
  bareRestateObject,
  closeShapes,
  enqueueBareDbos,
  handCompletes,
  registerBareDbosQueue,
  registerBareDbosWorkflow,
  registerHandDbosWorkflow,
  sendBareRestate,
  serveRestateEndpoint,
  shapeOf,
  shapeOptions,
  startShapes,
} from './lib/engine-shapes.mjs';
import { restateAdmin } from './lib/restate-admin.mjs';

process.env.RESTATE_LOGGING ??= 'ERROR';
const only = onlyOf(benchArgs(), 'restate,dbos');
/** The shapes (bench/lib/engine-shapes.mjs), as bench/engines.mjs runs them. */
const SHAPES = await startShapes();
const options = (id) => shapeOptions(SHAPES, shapeOf(id));
const closers = [];
const out = {};
try {
  if (only.has('restate')) {
    const { startRestateServer } = await import('../test/support/restate-server.mjs');
    const { restateAgent, restateClient } = await import('../dist/engines/restate/index.js');
    const sdk = await import('@restatedev/restate-sdk');
    const server = await startRestateServer();
    const { call: adminCall, query } = restateAdmin(server.admin);
    closers.push(server.stop);
    const endpoint = await serveRestateEndpoint(sdk, server, [
      restateAgent('bench', options),
      bareRestateObject(sdk),
    ]);
    closers.push(endpoint.close);
    for (const svc of ['bench', 'bare'])
      await adminCall(`/services/${svc}`, 'PATCH', { journal_retention: '1h' });
    const client = restateClient({ url: server.ingress, agent: 'bench' });
    for (const shape of Object.keys(SHAPES)) {
      const id = `${shape}.count`;
      await client.send(id, 'go');
      await sendBareRestate(server.ingress, id, shape);
      for (const svc of ['bench', 'bare']) {
        const rows = await query(
          `SELECT j.entry_type AS kind, count(*) AS n FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE i.target_service_name = '${svc}' AND i.target_service_key = '${id}' GROUP BY j.entry_type ORDER BY j.entry_type`,
        );
        const state = await query(
          `SELECT key, length(value_utf8) AS bytes FROM state WHERE service_name = '${svc}' AND service_key = '${id}'`,
        );
        out[`restate ${svc} ${shape}`] = { journal: rows, state };
      }
    }
  }
  if (only.has('dbos')) {
    const bench = await startBenchCluster();
    closers.push(bench.stop);
    const url = new URL(await bench.database('bench_dbos'));
    const appCounts = {};
    const sysCounts = {};
    const pool = countingPool(url.href, 4, appCounts);
    const sysPool = countingPool(url.href, 10, sysCounts);
    closers.push(() => pool.end());
    closers.push(() => sysPool.end());
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    const { dbosAgent } = await import('../dist/engines/dbos/index.js');
    // Polls far apart, so that a turn's window holds its own statements and few of the pollers'.
    const agent = dbosAgent('bench', options, { pool, queuePollMs: 1000 });
    const bareWf = registerBareDbosWorkflow(DBOS);
    const handWf = registerHandDbosWorkflow(DBOS, handCompletes(SHAPES), { pool });
    DBOS.setConfig({ name: 'agentloop-bench', systemDatabasePool: sysPool, logLevel: 'error' });
    await DBOS.launch();
    closers.push(() => DBOS.shutdown());
    await agent.start();
    await registerBareDbosQueue(DBOS, 1000);
    const snap = () => ({ app: { ...appCounts }, sys: { ...sysCounts } });
    const diff = (a, b) => {
      const out = {};
      for (const side of ['app', 'sys'])
        for (const [text, n] of Object.entries(b[side])) {
          const d = n - (a[side][text] ?? 0);
          if (d > 0) {
            const k = `${side}: ${text.replace(/\s+/g, ' ').trim().slice(0, 90)}`;
            out[k] = (out[k] ?? 0) + d;
          }
        }
      return out;
    };
    for (const shape of Object.keys(SHAPES)) {
      for (const mode of ['agent', 'bare', 'hand']) {
        const id = `${shape}.count.${mode}`;
        const before = snap();
        let wf;
        if (mode === 'agent') wf = await agent.post(id, 'go');
        else wf = await enqueueBareDbos(DBOS, mode === 'bare' ? bareWf : handWf, id, shape);
        await DBOS.retrieveWorkflow(wf).getResult({ pollingIntervalMs: 1000 });
        const after = snap();
        const { rows } = await pool.query(
          'SELECT count(*)::int AS n, sum(length(output))::int AS bytes FROM dbos.operation_outputs WHERE workflow_uuid = $1',
          [wf],
        );
        // Each step's name and record size, in the order DBOS numbered them (the bare plan's sizes).
        const { rows: each } = await pool.query(
          'SELECT function_name AS name, length(output)::int AS bytes FROM dbos.operation_outputs WHERE workflow_uuid = $1 ORDER BY function_id',
          [wf],
        );
        rows[0].each = each.map((r) => `${r.name.replace(`${id}/`, '')} ${r.bytes}`).join(', ');
        rows[0].names = each.map((r) => r.name.replace(`${id}/`, ''));
        // The session's row as the turn left it (bytes of each JSON column): what its end wrote.
        const row =
          mode === 'agent'
            ? `SELECT octet_length(snapshot::text) AS snapshot, octet_length(view::text) AS view, octet_length(result::text) AS result FROM agentloop_dbos.sessions WHERE session_id = $1`
            : mode === 'hand'
              ? 'SELECT octet_length(messages::text) AS messages FROM bench_hand.sessions WHERE session_id = $1'
              : undefined;
        if (row) rows[0].session = (await pool.query(row, [id])).rows[0];
        const statements = diff(before, after);
        const total = Object.values(statements).reduce((a, b) => a + b, 0);
        out[`dbos ${mode} ${shape}`] = { steps: rows[0], total, statements };
      }
      // The bare engine must take the turn's steps: the same names in the same order.
      const [agentNames, bareNames] = ['agent', 'bare'].map((m) => out[`dbos ${m} ${shape}`].steps.names);
      if (agentNames.join() !== bareNames.join())
        throw new Error(`${shape}: the bare steps ${bareNames} are not the turn's ${agentNames}`);
      for (const m of ['agent', 'bare', 'hand']) delete out[`dbos ${m} ${shape}`].steps.names;
    }
  }
} finally {
  for (const close of closers.reverse()) await close().catch((e) => console.error(e));
  await closeShapes(SHAPES);
}
console.log(JSON.stringify(out, null, 1));
