import { inTransaction, type PgPool } from './pg-types.js';

/** The tables of one schema, quoted for SQL. */
export interface Tables {
  schema: string;
  sessions: string;
  transcript: string;
  inbox: string;
  migrations: string;
  tokens: string;
  /** The LISTEN/NOTIFY channel of the schema's inboxes. */
  channel: string;
  /** The LISTEN/NOTIFY channel of the schema's saves (payload: the session id). */
  savedChannel: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The table names of `schema` (checked: lowercase letters, digits and `_`). */
export function tablesOf(schema: string): Tables {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `PostgresSessionStore: invalid schema ${JSON.stringify(schema)} (use 1-63 of a-z, 0-9 and _, not starting with a digit)`,
    );
  }
  const q = (name: string) => `"${schema}"."${name}"`;
  return {
    schema: `"${schema}"`,
    sessions: q('sessions'),
    transcript: q('transcript'),
    inbox: q('inbox'),
    migrations: q('migrations'),
    tokens: q('fencing_tokens'),
    channel: `"${schema}_inbox"`,
    savedChannel: `"${schema}_saved"`,
  };
}

/**
 * The schema's versions in order. Never edit a shipped one: add the next. Records and transcript
 * entries are stored as the JSON text every store writes (`text`, not `jsonb`: jsonb reorders keys
 * and refuses `\u0000`), so a record comes back exactly as from the file store.
 */
const MIGRATIONS: readonly ((t: Tables) => string)[] = [
  (t) => `
    CREATE SEQUENCE ${t.tokens};
    CREATE TABLE ${t.sessions} (
      id text PRIMARY KEY,
      record text,
      summary text,
      updated_at text,
      transcript_seq bigint NOT NULL DEFAULT 0,
      inbox_seq bigint NOT NULL DEFAULT 0,
      lease_owner text,
      lease_pid integer,
      lease_host text,
      lease_token bigint NOT NULL DEFAULT 0,
      lease_expires timestamptz
    );
    CREATE TABLE ${t.transcript} (
      session_id text NOT NULL,
      seq bigint NOT NULL,
      entry text NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE ${t.inbox} (
      session_id text NOT NULL,
      seq bigint NOT NULL,
      item text NOT NULL,
      approval_of text,
      posted_at text NOT NULL,
      done_at timestamptz,
      PRIMARY KEY (session_id, seq)
    );
    CREATE UNIQUE INDEX ON ${t.inbox} (session_id, approval_of) WHERE approval_of IS NOT NULL;
    CREATE INDEX ON ${t.inbox} (session_id) WHERE done_at IS NULL;
  `,
  // The record's createdAt as a JSON string beside it, so that a save is one statement (save-statement.ts).
  (t) => `
    ALTER TABLE ${t.sessions} ADD COLUMN created_json text;
    UPDATE ${t.sessions} SET created_json =
      substring(record from '^\\{"id":"(?:[^"\\\\]|\\\\.)*","state":"(?:[^"\\\\]|\\\\.)*","createdAt":("[^"\\\\]*")')
    WHERE record IS NOT NULL;
  `,
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema to {@link SCHEMA_VERSION}: creates it and its tables on first use and applies the
 * missing versions, in one transaction under an advisory lock (many workers may start at once).
 * Idempotent. A schema newer than this code is refused.
 */
export async function migrate(pool: PgPool, t: Tables, schemaName: string): Promise<number> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agentloop:${schemaName}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${t.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${t.migrations} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${t.migrations}`,
    );
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `PostgresSessionStore: schema ${schemaName} is at version ${current}, newer than this agentloop knows (${SCHEMA_VERSION}); upgrade agentloop`,
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!(t));
      await client.query(`INSERT INTO ${t.migrations} (version) VALUES ($1)`, [version]);
    }
    return SCHEMA_VERSION;
  });
}
