import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresSessionStore, SCHEMA_VERSION } from '../src/postgres/postgres-session-store.js';
import type { SessionStore } from '../src/session/session-store.js';
import { describeSessionStoreConformance } from '../src/store-conformance/index.js';
import { dropSchema, freshSchema, postgresStore, postgresUrl } from './support/postgres.js';

const schemas = new Map<SessionStore, string>();

describeSessionStoreConformance(
  { describe, it, beforeEach, afterEach },
  {
    name: 'PostgresSessionStore',
    create: () => {
      const schema = freshSchema('conf');
      const store = postgresStore(schema);
      schemas.set(store, schema);
      return store;
    },
    // Another process's store on the same schema.
    reopen: (store) => postgresStore(schemas.get(store)!),
    close: (store) => (store as PostgresSessionStore).close(),
    dispose: async (store) => {
      await (store as PostgresSessionStore).close();
      await dropSchema(schemas.get(store)!);
      schemas.delete(store);
    },
  },
);

describe('PostgresSessionStore', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of cleanup) await step();
  });

  it('migrates once: concurrent and repeated migrate() calls leave one set of tables at the current version', async () => {
    const schema = freshSchema('mig');
    const stores = [postgresStore(schema), postgresStore(schema), postgresStore(schema)];
    cleanup.push(async () => {
      for (const s of stores) await s.close();
      await dropSchema(schema);
    });
    expect(await Promise.all(stores.map((s) => s.migrate()))).toEqual([
      SCHEMA_VERSION,
      SCHEMA_VERSION,
      SCHEMA_VERSION,
    ]);
    expect(await stores[0]!.migrate()).toBe(SCHEMA_VERSION);
    const client = new pg.Client(postgresUrl());
    await client.connect();
    const versions = await client.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
    const tables = await client.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    await client.end();
    expect(versions.rows.map((r) => r.version)).toEqual(
      Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(['inbox', 'migrations', 'sessions', 'transcript']);
  });

  it('refuses a schema newer than the code, naming the versions', async () => {
    const schema = freshSchema('new');
    const store = postgresStore(schema);
    cleanup.push(async () => {
      await store.close();
      await dropSchema(schema);
    });
    await store.migrate();
    const client = new pg.Client(postgresUrl());
    await client.connect();
    await client.query(`INSERT INTO "${schema}".migrations (version) VALUES ($1)`, [SCHEMA_VERSION + 1]);
    await client.end();
    const fresh = postgresStore(schema);
    cleanup.push(() => fresh.close());
    await expect(fresh.load('s1')).rejects.toThrow(
      `is at version ${SCHEMA_VERSION + 1}, newer than this agentloop knows`,
    );
  });

  it('shares sessions between two stores (two processes): seq numbers continue across them', async () => {
    const schema = freshSchema('two');
    const a = postgresStore(schema);
    const b = postgresStore(schema);
    cleanup.push(async () => {
      await a.close();
      await b.close();
      await dropSchema(schema);
    });
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => a.appendTranscript('s1', [{ kind: 'event', event: `a${i}` }])),
      ...Array.from({ length: 20 }, (_, i) => b.appendTranscript('s1', [{ kind: 'event', event: `b${i}` }])),
    ]);
    const { entries } = await a.readTranscript('s1');
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const saved = await b.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    expect(saved.transcriptSeq).toBe(40);
    expect(await a.load('s1')).toEqual(saved);
  });

  it('rejects an invalid schema name before connecting', () => {
    expect(
      () => new PostgresSessionStore({ connectionString: postgresUrl() }, { schema: 'x"; drop' }),
    ).toThrow(/invalid schema/);
  });
});
