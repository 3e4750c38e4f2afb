import { DBOS } from '@dbos-inc/dbos-sdk';
import type pg from 'pg';
import { hostName } from '../../session/host-name.js';

/** Options of {@link startDbosRecovery}. */
export interface DbosRecoveryOptions {
  /** The application's PostgreSQL (the leases table goes beside the sessions table). */
  pool: pg.Pool;
  /** Schema of the leases table (default `agentloop_dbos`, as the sessions table). */
  schema?: string;
  /** The queues whose turns this process takes over: every `dbosAgent(...).queue` it serves. */
  queues: string[];
  /**
   * This process's executor id, the one given to `DBOS.setConfig({ executorID })`. Needed when called
   * before `DBOS.launch()`, which is the safe order: a launched process dequeues turns at once, and one
   * killed before its lease is written would never be taken over. After launch it defaults to
   * `DBOS.executorID`.
   */
  executorId?: string;
  /** How long a process is trusted without renewing its lease (default 10 s). */
  leaseMs?: number;
  /** Hears what went wrong with a renewal or a takeover (default: stderr). */
  onError?: (error: unknown) => void;
  /** Hears each turn taken over from a dead process. */
  onTakeover?: (event: { workflowId: string; from: string }) => void;
}

/** A running recovery: stop it when the process shuts down (its lease is dropped). */
export interface DbosRecovery {
  stop(): Promise<void>;
}

/**
 * An executor id for this process, unique over its lifetime (`<host>:<pid>:<random>`): give it to
 * `DBOS.setConfig({ executorID })`. Processes sharing one id would recover each other's live turns.
 */
export function dbosExecutorId(): string {
  return `${hostName()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Takes over the turns of DBOS processes that died. DBOS recovers a process's unfinished workflows
 * only in a process with the same executor id (or through its hosted Conductor); with one id per
 * process lifetime, nobody would. So every process holds a lease on its executor id in PostgreSQL,
 * renewed every third of `leaseMs`; when a lease lapses, the first process to lock it resumes the
 * dead executor's pending turns on their own queue, then deletes it (a sweeper that dies halfway
 * leaves it to the next) (`DBOS.resumeWorkflows(ids, { queueName })`, a
 * public API), where any process picks them up and the replay answers from the recorded steps.
 *
 * Call it before `DBOS.launch()` with the `executorId` given to `DBOS.setConfig`: the lease is written
 * first, so a process killed right after launch (it may have dequeued a turn already) is taken over
 * too; the sweep of other processes' leases starts once DBOS is launched.
 *
 * A process paused past its lease (a frozen VM) may find its turn taken over; DBOS then refuses the
 * second recording of any step, but a tool both ran may have run twice: keep `leaseMs` well above
 * the longest pause you expect.
 */
export async function startDbosRecovery(options: DbosRecoveryOptions): Promise<DbosRecovery> {
  const schema = options.schema ?? 'agentloop_dbos';
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new Error(`agentloop/dbos: schema "${schema}" must be a lower-case SQL identifier`);
  }
  const launched = DBOS.isInitialized();
  if (!launched && options.executorId === undefined) {
    throw new Error(
      'agentloop/dbos: startDbosRecovery before DBOS.launch() needs executorId: the one given to DBOS.setConfig({ executorID })',
    );
  }
  const me = options.executorId ?? DBOS.executorID;
  if (me === 'local' || me === '') {
    throw new Error(
      'agentloop/dbos: recovery needs an executor id per process: DBOS.setConfig({ executorID: dbosExecutorId() }) before DBOS.launch()',
    );
  }
  if (launched) assertSameExecutor(me);
  const { pool, queues } = options;
  const leaseMs = options.leaseMs ?? 10_000;
  const table = `"${schema}".executors`;
  const onError =
    options.onError ??
    ((error: unknown) => process.stderr.write(`agentloop/dbos recovery: ${String(error)}\n`));
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).catch(ignoreRace);
  await pool
    .query(
      `CREATE TABLE IF NOT EXISTS ${table} (executor_id text PRIMARY KEY, expires_at timestamptz NOT NULL)`,
    )
    .catch(ignoreRace);
  const renew = () =>
    pool.query(
      `INSERT INTO ${table} (executor_id, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond')
       ON CONFLICT (executor_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [me, leaseMs],
    );
  await renew();
  let sweeping = false;
  let checked = launched;
  let mismatched = false;
  const sweep = async () => {
    // Before launch there is nothing to resume with: the lease alone is what matters then.
    if (sweeping || mismatched || !DBOS.isInitialized()) return;
    if (!checked) {
      checked = true;
      mismatched = DBOS.executorID !== me;
      assertSameExecutor(me);
    }
    sweeping = true;
    // One lapsed lease at a time, locked while its turns are resumed and deleted only then: a sweeper
    // killed halfway leaves the lease (and its lock goes with its connection) for the next one.
    const client = await pool.connect();
    try {
      for (;;) {
        await client.query('BEGIN');
        const { rows } = await client.query<{ executor_id: string }>(
          `SELECT executor_id FROM ${table} WHERE expires_at < now() AND executor_id <> $1
           LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [me],
        );
        const dead = rows[0]?.executor_id;
        if (dead === undefined) {
          await client.query('COMMIT');
          break;
        }
        const pending = await DBOS.listWorkflows({ status: 'PENDING', executorId: dead, queueName: queues });
        for (const workflow of pending) {
          await DBOS.resumeWorkflow(workflow.workflowID, { queueName: workflow.queueName ?? queues[0]! });
          options.onTakeover?.({ workflowId: workflow.workflowID, from: dead });
        }
        await client.query(`DELETE FROM ${table} WHERE executor_id = $1`, [dead]);
        await client.query('COMMIT');
      }
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
      sweeping = false;
    }
  };
  const renewal = setInterval(() => void renew().catch(onError), Math.max(50, Math.floor(leaseMs / 3)));
  const sweeper = setInterval(() => void sweep().catch(onError), Math.max(50, Math.floor(leaseMs / 2)));
  void sweep().catch(onError);
  return {
    async stop() {
      clearInterval(renewal);
      clearInterval(sweeper);
      // Lapsed at once: whatever this process leaves unfinished is taken over by the next sweep.
      await pool
        .query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE executor_id = $1`, [me])
        .catch(onError);
    },
  };
}

/** The lease must be on the id DBOS records this process's workflows under, or nobody resumes them. */
function assertSameExecutor(me: string): void {
  if (DBOS.executorID !== me) {
    throw new Error(
      `agentloop/dbos: recovery holds a lease on executor "${me}" but DBOS runs as "${DBOS.executorID}": give DBOS.setConfig the same executorID`,
    );
  }
}

/** Two processes creating the schema or table at once: one gets a unique violation. */
function ignoreRace(error: { code?: string }): void {
  if (error.code !== '23505') throw error;
}
