// agentloop/postgres: sessions in PostgreSQL, shared by many workers (docs/scale-out.md). Needs `pg` 8.
export {
  type PgPool,
  type PgPoolClient,
  type PgQueryable,
  type PgResult,
  type PostgresConnection,
  PostgresSessionStore,
  type PostgresSessionStoreOptions,
  SCHEMA_VERSION,
} from './postgres-session-store.js';
