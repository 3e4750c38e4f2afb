import type pg from 'pg';
import { whenUnreachable } from './database-unreachable.js';
import { type NamedStatement, namedStatement } from './named-statement.js';

/**
 * Interrupts asked of running turns, kept in a table of their own (`<schema>.interrupts`, keyed by the
 * turn's workflow id) rather than sent as DBOS messages: a turn workflow that listened for messages
 * while its steps run would take message slots at times that differ between attempts, and DBOS
 * replays a workflow by position. The turn looks at this table outside its steps (`InterruptWatch`)
 * and records what it did with an interrupt in the steps it cut (docs/engines.md, "Interrupts").
 */
export class DbosInterrupts {
  readonly #pool: pg.Pool;
  readonly #table: string;

  /** `schema` is the sessions table's, checked there (`DbosSessions`). */
  constructor(pool: pg.Pool, schema = 'agentloop_dbos') {
    this.#pool = pool;
    this.#table = `"${schema}".interrupts`;
    this.#asked = namedStatement(
      `SELECT workflow_id, reason FROM ${this.#table} WHERE workflow_id = ANY($1)`,
    );
  }

  /** The poll's statement, named ({@link namedStatement}): it runs every `interruptPollMs` a turn runs. */
  readonly #asked: NamedStatement;

  /** Creates the table (idempotent; the schema exists: `DbosSessions.migrate()` runs first). */
  async migrate(): Promise<void> {
    await this.#pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.#table} (
          workflow_id text PRIMARY KEY, reason text,
          asked_at timestamptz NOT NULL DEFAULT now())`,
      )
      .catch((error: { code?: string }) => {
        // Two processes creating the table at once: one of them gets a unique violation.
        if (error.code !== '23505') throw error;
      });
  }

  /** Asks the turn `workflowId` to stop (the first ask of a turn wins; asking again changes nothing). */
  async ask(workflowId: string, reason: string | undefined, what: string): Promise<void> {
    await this.#pool
      .query(`INSERT INTO ${this.#table} (workflow_id, reason) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
        workflowId,
        reason ?? null,
      ])
      .catch((error: unknown) => {
        throw whenUnreachable(error, this.#pool, what);
      });
  }

  /** The interrupts asked of the turns given, by workflow id. */
  async asked(workflowIds: string[]): Promise<Map<string, string | undefined>> {
    const { rows } = await this.#pool.query<{ workflow_id: string; reason: string | null }>({
      ...this.#asked,
      values: [workflowIds],
    });
    return new Map(rows.map((row) => [row.workflow_id, row.reason ?? undefined]));
  }
}

/**
 * Tells the turns running in this process of the interrupts asked of them: each turn registers when
 * it starts (with what the start read, so a turn resumed after a crash hears an interrupt asked meanwhile), and
 * while any runs the table is read every `pollMs`. A read that fails (the database away) is tried
 * again at the next poll. A turn's interrupt is cleared when it ends (`DbosSessions.end`).
 */
export class InterruptWatch {
  readonly #interrupts: DbosInterrupts;
  readonly #pollMs: number;
  readonly #turns = new Map<string, (reason: string | undefined) => void>();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(interrupts: DbosInterrupts, pollMs: number) {
    this.#interrupts = interrupts;
    this.#pollMs = pollMs;
  }

  /**
   * Registers a running turn; `heard` is called (once) when an interrupt was asked of it. `asked` is
   * the interrupt asked of it before it started (a turn resumed after a crash), read with the
   * session's start (`DbosSessions.start`): one asked after that read is in the table when the next
   * poll reads it. Returns the unregister.
   */
  watch(
    workflowId: string,
    heard: (reason: string | undefined) => void,
    asked: { reason: string | undefined } | undefined,
  ): () => void {
    let told = false;
    const once = (reason: string | undefined) => {
      if (told) return;
      told = true;
      this.#turns.delete(workflowId);
      heard(reason);
    };
    this.#turns.set(workflowId, once);
    this.#timer ??= setInterval(() => void this.#poll(), this.#pollMs).unref();
    if (asked) once(asked.reason);
    return () => {
      this.#turns.delete(workflowId);
      if (this.#turns.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#turns.size === 0) return;
    this.#polling = true;
    try {
      const asked = await this.#interrupts.asked([...this.#turns.keys()]);
      for (const [id, reason] of asked) this.#turns.get(id)?.(reason);
    } catch {
      // The database is away: the next poll tries again.
    } finally {
      this.#polling = false;
    }
  }
}
