import type pg from 'pg';
import { whenUnreachable } from './database-unreachable.js';

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

/**
 * The sessions of `dbosAgent`s in a table of their own (`<schema>.sessions`, keyed by agent and
 * session id) beside DBOS's system tables: DBOS keeps workflows and steps, not per-session state.
 * Written only from steps of the turn workflow, so a replay never writes twice. Columns are `json`,
 * not `jsonb`: a call's arguments keep the order the model wrote them in.
 */
export class DbosSessions {
  readonly #pool: pg.Pool;
  readonly #table: string;
  readonly #schema: string;

  constructor(pool: pg.Pool, schema = 'agentloop_dbos') {
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) {
      throw new Error(`agentloop/dbos: schema "${schema}" must be a lower-case SQL identifier`);
    }
    this.#pool = pool;
    this.#schema = schema;
    this.#table = `"${schema}".sessions`;
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
          snapshot json, view json, result json,
          updated_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (agent, session_id))`,
      )
      .catch((error: { code?: string }) => {
        if (error.code !== '23505') throw error;
      });
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

  /** Writes the view (and, at the end of a turn, the snapshot and the result). */
  async write(
    agent: string,
    sessionId: string,
    fields: { view: DbosSessionView; snapshot?: unknown; result?: unknown },
  ): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#table} (agent, session_id, view, snapshot, result) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (agent, session_id) DO UPDATE SET view = EXCLUDED.view,
         snapshot = COALESCE(EXCLUDED.snapshot, ${this.#table}.snapshot),
         result = COALESCE(EXCLUDED.result, ${this.#table}.result), updated_at = now()`,
      [
        agent,
        sessionId,
        JSON.stringify(fields.view),
        fields.snapshot === undefined ? null : JSON.stringify(fields.snapshot),
        fields.result === undefined ? null : JSON.stringify(fields.result),
      ],
    );
  }
}
