import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresSessionStore } from '../src/postgres/postgres-session-store.js';
import { dropSchema, freshSchema, postgresUrl } from './support/postgres.js';

/** A pool that counts the statements it runs (pool.query and checked-out clients alike). */
function countingPool(): { pool: pg.Pool; statements: string[] } {
  const statements: string[] = [];
  const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (
      text: unknown,
      ...rest: unknown[]
    ) => {
      statements.push(typeof text === 'string' ? text : String((text as { text?: string }).text));
      return query(text, ...rest);
    };
  });
  return { pool, statements };
}

describe('PostgresSessionStore: a save is one statement', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of cleanup) await step();
  });

  const open = async () => {
    const schema = freshSchema('save');
    const { pool, statements } = countingPool();
    const store = new PostgresSessionStore({ pool }, { schema });
    cleanup.push(async () => {
      await store.close();
      await pool.end();
      await dropSchema(schema);
    });
    await store.migrate();
    return { store, statements, schema, pool };
  };

  it('stamps and fences a save in one round trip; a stale lease changes nothing', async () => {
    const { store, statements } = await open();
    const first = await store.acquireLease('s1', { owner: 'a', leaseMs: 60_000 });
    await store.appendTranscript('s1', [{ kind: 'event', event: 'x' }], { lease: first });
    statements.length = 0;
    const saved = await store.save(
      { id: 's1', state: 'AwaitingInput', title: 'say "hi"\n', snapshot: { n: 1 } },
      { lease: first },
    );
    expect(statements).toHaveLength(1);
    expect(saved.transcriptSeq).toBe(1);
    expect(await store.load('s1')).toEqual(saved);
    expect((await store.list())[0]).toMatchObject({
      id: 's1',
      title: 'say "hi"',
      createdAt: saved.createdAt,
    });

    // Another owner takes the lapsed lease: the first owner's save is refused and the record stays.
    await store.releaseLease(first);
    const second = await store.acquireLease('s1', { owner: 'b', leaseMs: 60_000 });
    await expect(
      store.save({ id: 's1', state: 'Completed', snapshot: { n: 2 } }, { lease: first }),
    ).rejects.toMatchObject({ code: 'stale_lease' });
    expect(await store.load('s1')).toEqual(saved);
    const next = await store.save({ id: 's1', state: 'Completed', snapshot: { n: 2 } }, { lease: second });
    expect(next.createdAt).toBe(saved.createdAt);
    expect(Date.parse(next.updatedAt)).toBeGreaterThan(Date.parse(saved.updatedAt));
  });

  it('keeps updatedAt increasing when the clock stands still and createdAt from the first save', async () => {
    const schema = freshSchema('clock');
    const fixed = new Date('2030-01-02T03:04:05.678Z');
    const store = new PostgresSessionStore(
      { connectionString: postgresUrl(), max: 2 },
      { schema, now: () => fixed },
    );
    cleanup.push(async () => {
      await store.close();
      await dropSchema(schema);
    });
    const other = new PostgresSessionStore(
      { connectionString: postgresUrl(), max: 2 },
      { schema, now: () => fixed },
    );
    cleanup.push(() => other.close());
    const a = await store.save({
      id: 'c1',
      state: 'AwaitingInput',
      createdAt: '2029-12-31T00:00:00.000Z',
      snapshot: null,
    });
    expect(a.createdAt).toBe('2029-12-31T00:00:00.000Z');
    expect(a.updatedAt).toBe('2030-01-02T03:04:05.678Z');
    // A second process with the same clock: its save still comes after (the row's time + 1 ms).
    const b = await other.save({ id: 'c1', state: 'Completed', snapshot: null });
    expect(b.updatedAt).toBe('2030-01-02T03:04:05.679Z');
    expect(b.createdAt).toBe(a.createdAt);
    expect(await store.load('c1')).toEqual(b);
  });

  it('a save notifies the saves channel with the session id, unless notifySaves is false', async () => {
    const heard = async (notifySaves: boolean) => {
      const schema = freshSchema('notify');
      const store = new PostgresSessionStore(
        { connectionString: postgresUrl(), max: 2 },
        { schema, notifySaves },
      );
      cleanup.push(async () => {
        await store.close();
        await dropSchema(schema);
      });
      await store.migrate();
      const listener = new pg.Client(postgresUrl());
      await listener.connect();
      const ids: string[] = [];
      listener.on('notification', (m) => ids.push(`${m.channel}:${m.payload}`));
      await listener.query(`LISTEN "${schema}_saved"`);
      await store.save({ id: 'n1', state: 'AwaitingInput', snapshot: null });
      const lease = await store.acquireLease('n1', { owner: 'o', leaseMs: 60_000 });
      await store.save({ id: 'n1', state: 'Completed', snapshot: null }, { lease });
      // A round trip on the listening connection delivers what was sent before it.
      await new Promise((r) => setTimeout(r, 100));
      await listener.query('SELECT 1');
      await listener.end();
      return ids;
    };
    const on = await heard(true);
    expect(on).toHaveLength(2);
    expect(on[0]).toMatch(/_saved:n1$/);
    expect(await heard(false)).toEqual([]);
  });

  it('the migration to version 2 takes createdAt from records saved before it', async () => {
    const { store, schema, pool } = await open();
    const old = await store.save({ id: 'm1', state: 'say "x" \\ ok', snapshot: { s: '"createdAt":"no"' } });
    // Back to version 1, as a database written by the previous release.
    await pool.query(`ALTER TABLE "${schema}".sessions DROP COLUMN created_json`);
    await pool.query(`DELETE FROM "${schema}".migrations WHERE version = 2`);
    const upgraded = new PostgresSessionStore({ connectionString: postgresUrl(), max: 2 }, { schema });
    cleanup.push(() => upgraded.close());
    expect(await upgraded.migrate()).toBe(2);
    const after = await upgraded.save({
      id: 'm1',
      state: 'Completed',
      createdAt: '1999-01-01T00:00:00.000Z',
      snapshot: null,
    });
    expect(after.createdAt).toBe(old.createdAt);
  });
});
