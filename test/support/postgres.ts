import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { PostgresSessionStore } from '../../src/postgres/postgres-session-store.js';

/** The URL of the run's throwaway cluster; throws the reason (e.g. the package to install) when it did not start. */
export function postgresUrl(): string {
  const provided = inject('postgres');
  if (provided.url === undefined)
    throw new Error(`the test PostgreSQL cluster is not running: ${provided.error}`);
  return provided.url;
}

/** A fresh schema name, so that each test starts from an empty database. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** A database of its own on the run's cluster (`<prefix>_<random>`); `drop()` removes it, its connections closed. */
export async function freshDatabase(
  prefix: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = freshSchema(prefix);
  const admin = async (sql: string) => {
    const client = new pg.Client(postgresUrl());
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl());
  url.pathname = `/${name}`;
  return { name, url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A store on a schema of its own; `dropSchema` removes it. */
export function postgresStore(schema = freshSchema()): PostgresSessionStore {
  return new PostgresSessionStore({ connectionString: postgresUrl(), max: 4 }, { schema });
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client(postgresUrl());
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A store on a fresh schema whose closing and dropping is pushed onto `cleanups` (run them in afterAll). */
export function disposablePostgresStore(
  prefix: string,
  cleanups: (() => Promise<void>)[],
): PostgresSessionStore {
  const schema = freshSchema(prefix);
  const store = postgresStore(schema);
  cleanups.push(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return store;
}
