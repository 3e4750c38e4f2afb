import type pg from 'pg';
import { whenUnreachable } from './database-unreachable.js';
import { type NamedStatement, namedStatement } from './named-statement.js';

/** Where a session stands, as the turn workflow last wrote it (`state` on the client). */
export interface DbosSessionView {
  sessionId: string;
  /** `AwaitingInput` before the first turn, `Thinking` while a turn runs, then the state it rests in. */
  state: string;
  turn: number;
  pendingApprovals: { toolCallId: string; name: string; args: unknown }[];
  /** The workflow running the session's turn now (approvals are sent to it). */
  workflowId?: string;
  response?: string;
  terminateReason?: string;
  error?: string;
}

/** One session's row: the snapshot the last turn left, its view, and the last turn's outcome. */
export interface DbosSessionRow {
  snapshot: unknown;
  view: DbosSessionView | null;
  result: unknown;
}

/** What a turn starts from: the session's snapshot (none before its first turn), and an interrupt asked of it already. */
export interface DbosTurnStart {
  snapshot: unknown;
  interrupt: { reason: string | undefined } | undefined;
}

/**
 * The sessions of `dbosAgent`s in a table of their own (`<schema>.sessions`, keyed by agent and
 * session id) beside DBOS's system tables: DBOS keeps workflows and steps, not per-session state.
 * Written by the turn workflow with plain statements, not DBOS steps (a step would add its own
 * committed record to each write: docs/engines.md, "What a turn costs"). Each write is safe to run
 * again in a replay: the snapshot a turn ends with is saved with the id of its workflow (`saved_by`)
 * and the one it started from kept beside it (`prev_snapshot`), so a replay of a turn whose save
 * already ran starts from the same snapshot as its first execution, and does not set its view back.
 * Columns are `json`, not `jsonb`: a call's arguments keep the order the model wrote them in.
 */
export class DbosSessions {
  readonly #pool: pg.Pool;
  readonly #table: string;
  readonly #schema: string;
  /** The interrupts table (`DbosInterrupts`): a turn's start reads it, its end clears it. */
  readonly #interrupts: string;
  /** DBOS's workflow status table as named in this database (`<dbosSchema>.workflow_status`). */
  readonly #dbosStatus: string;
  /** Whether that table is in this database and readable ({@link findDbosTables}). */
  #dbosHere = false;
  /** The per-turn statements, named ({@link namedStatement}); the end's depends on {@link findDbosTables}. */
  readonly #startStatement: NamedStatement;
  #endStatement: NamedStatement;

  /**
   * `dbosSchema`: the schema of DBOS's system tables (DBOS's `systemDatabaseSchemaName`, `dbos`
   * by default), looked for in this database by {@link findDbosTables}.
   */
  constructor(pool: pg.Pool, schema = 'agentloop_dbos', dbosSchema = 'dbos') {
    for (const name of [schema, dbosSchema]) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
        throw new Error(`agentloop/dbos: schema "${name}" must be a lower-case SQL identifier`);
      }
    }
    this.#pool = pool;
    this.#schema = schema;
    this.#table = `"${schema}".sessions`;
    this.#interrupts = `"${schema}".interrupts`;
    this.#dbosStatus = `"${dbosSchema}".workflow_status`;
    this.#startStatement = namedStatement(
      `WITH prior AS (
           SELECT CASE WHEN saved_by = $4 THEN prev_snapshot ELSE snapshot END AS snapshot
             FROM ${this.#table} WHERE agent = $1 AND session_id = $2),
         began AS (
           INSERT INTO ${this.#table} AS s (agent, session_id, view) VALUES ($1, $2, $3)
           ON CONFLICT (agent, session_id) DO UPDATE SET view = EXCLUDED.view, updated_at = now()
             WHERE s.saved_by IS DISTINCT FROM $4 AND s.view->>'workflowId' IS DISTINCT FROM $4)
         SELECT (SELECT snapshot FROM prior) AS snapshot, i.workflow_id IS NOT NULL AS interrupted,
                i.reason, set_config('synchronous_commit', 'off', true) AS commit
           FROM (SELECT 1) AS one LEFT JOIN ${this.#interrupts} i ON i.workflow_id = $4`,
    );
    this.#endStatement = namedStatement(this.#endText());
  }

  /**
   * Looks for DBOS's workflow status table in this database, readable by this pool's role: when it
   * is there, a turn's {@link end} checks that its workflow's row is (DBOS's system tables are in
   * this very database) and then commits without waiting for the WAL flush, which DBOS's own record
   * of the workflow's end, committed after it on the same cluster, waits for. Once per process.
   */
  async findDbosTables(): Promise<boolean> {
    const { rows } = await this.#pool.query<{ here: boolean | null }>(
      `SELECT has_table_privilege(to_regclass($1), 'SELECT') AS here`,
      [this.#dbosStatus],
    );
    this.#dbosHere = rows[0]?.here === true;
    this.#endStatement = namedStatement(this.#endText());
    return this.#dbosHere;
  }

  /** Creates the table (idempotent). */
  async migrate(): Promise<void> {
    await this.#pool
      .query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`)
      .catch((error: { code?: string }) => {
        // Two processes creating the schema at once: one of them gets a unique violation.
        if (error.code !== '23505') throw error;
      });
    await this.#pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.#table} (
          agent text NOT NULL, session_id text NOT NULL,
          snapshot json, view json, result json, prev_snapshot json, saved_by text,
          updated_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (agent, session_id))`,
      )
      .catch((error: { code?: string }) => {
        if (error.code !== '23505') throw error;
      });
    // Added after the first release: a table made by it gets them here (looked up first: an ALTER
    // takes the table's strongest lock, even when there is nothing to add).
    const { rows } = await this.#pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'sessions' AND column_name IN ('prev_snapshot', 'saved_by')`,
      [this.#schema],
    );
    if (rows[0]?.n !== 2) {
      await this.#pool.query(
        `ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS prev_snapshot json, ADD COLUMN IF NOT EXISTS saved_by text`,
      );
    }
  }

  async load(agent: string, sessionId: string): Promise<DbosSessionRow | undefined> {
    const { rows } = await this.#pool
      .query<DbosSessionRow>(
        `SELECT snapshot, view, result FROM ${this.#table} WHERE agent = $1 AND session_id = $2`,
        [agent, sessionId],
      )
      .catch((error: unknown) => {
        throw whenUnreachable(error, this.#pool, `reading session "${sessionId}" of agent "${agent}"`);
      });
    return rows[0];
  }

  /**
   * Turn `workflowId` begins (one statement, safe to run again in a replay): reads the snapshot it
   * starts from (the session's, or, once the turn's own {@link end} ran, the one kept from before
   * it: the same in every attempt), whether an interrupt was asked of it already (a resumed turn),
   * and sets the session's view to `view`, unless this turn wrote the view already (a replay leaves
   * the view its first execution wrote, an approval wait's).
   *
   * Committed without waiting for the WAL flush (`synchronous_commit = off` for this statement
   * only): the view it writes is visible at once, and a PostgreSQL crash can lose it only, which a
   * replay writes again and the turn's next writes (upserts) do not need (docs/engines.md, "What a
   * turn costs").
   */
  async start(
    agent: string,
    sessionId: string,
    workflowId: string,
    view: DbosSessionView,
  ): Promise<DbosTurnStart> {
    const { rows } = await this.#pool
      .query<{ snapshot: unknown; interrupted: boolean; reason: string | null }>({
        ...this.#startStatement,
        values: [agent, sessionId, JSON.stringify(view), workflowId],
      })
      .catch((error: unknown) => {
        throw whenUnreachable(
          error,
          this.#pool,
          `starting a turn of session "${sessionId}" of agent "${agent}"`,
        );
      });
    const row = rows[0];
    return {
      snapshot: row?.snapshot ?? undefined,
      interrupt: row?.interrupted ? { reason: row.reason ?? undefined } : undefined,
    };
  }

  /** Writes the view of a turn that waits (for approval). */
  async write(agent: string, sessionId: string, fields: { view: DbosSessionView }): Promise<void> {
    // An upsert: the row {@link start} inserted may be lost with a PostgreSQL crash.
    await this.#pool.query(
      `INSERT INTO ${this.#table} (agent, session_id, view) VALUES ($1, $2, $3)
       ON CONFLICT (agent, session_id) DO UPDATE SET view = EXCLUDED.view, updated_at = now()`,
      [agent, sessionId, JSON.stringify(fields.view)],
    );
  }

  /**
   * A turn ends (one statement): its view, outcome and snapshot, saved as written by `workflowId`;
   * the snapshot it started from is kept as `prev_snapshot` for a replay (run again, it keeps it).
   * The turn's interrupt, if one was asked, is cleared in the same statement. An upsert: the row
   * {@link start} inserted may be lost with a PostgreSQL crash (then the turn started from none).
   *
   * When DBOS's system tables are in this database ({@link findDbosTables}) and hold the turn's
   * workflow, the statement commits without waiting for the WAL flush (`synchronous_commit = off`
   * for it only; `relaxed` in the answer): the workflow returns right after it, and DBOS's record of
   * its end, committed on the same cluster later with the flush, flushes this commit too. A
   * PostgreSQL crash before that loses both, and DBOS replays the turn, which writes its end again
   * (docs/engines.md, "What a turn costs"). Otherwise it waits for the flush itself.
   */
  async end(
    agent: string,
    sessionId: string,
    workflowId: string,
    fields: { view: DbosSessionView; snapshot: unknown; result: unknown },
  ): Promise<{ relaxed: boolean }> {
    const { rows } = await this.#pool.query<{ relaxed: boolean }>({
      ...this.#endStatement,
      values: [
        agent,
        sessionId,
        JSON.stringify(fields.view),
        JSON.stringify(fields.snapshot),
        JSON.stringify(fields.result),
        workflowId,
      ],
    });
    return { relaxed: rows[0]?.relaxed === true };
  }

  /** The end's statement ({@link end}): it relaxes its commit when DBOS's tables are here. */
  #endText(): string {
    const relax = this.#dbosHere
      ? `CASE WHEN EXISTS (SELECT 1 FROM ${this.#dbosStatus} WHERE workflow_uuid = $6)
           THEN set_config('synchronous_commit', 'off', true) END IS NOT NULL`
      : 'false';
    return `WITH cleared AS (DELETE FROM ${this.#interrupts} WHERE workflow_id = $6),
       flush AS (SELECT ${relax} AS relaxed)
       INSERT INTO ${this.#table} AS s (agent, session_id, view, snapshot, result, saved_by)
         SELECT $1, $2, $3::json, $4::json, $5::json, $6 FROM flush
       ON CONFLICT (agent, session_id) DO UPDATE SET view = EXCLUDED.view, snapshot = EXCLUDED.snapshot,
         result = EXCLUDED.result, saved_by = EXCLUDED.saved_by,
         prev_snapshot = CASE WHEN s.saved_by = $6 THEN s.prev_snapshot ELSE s.snapshot END, updated_at = now()
       RETURNING (SELECT relaxed FROM flush) AS relaxed`;
  }
}
