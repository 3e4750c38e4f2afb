import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbosInterrupts } from '../src/engines/dbos/dbos-interrupts.js';
import { DbosSessions, type DbosSessionView } from '../src/engines/dbos/dbos-sessions.js';
import { dropSchema, freshSchema, postgresUrl } from './support/postgres.js';

// The DBOS adapter's sessions table, written by a turn workflow with plain statements (not DBOS
// steps): each write must be safe to run again when DBOS replays the turn after a crash. The real
// PostgreSQL of the run; a replay is the same workflow id calling the same writes again.

const schema = freshSchema('dbos');
let pool: pg.Pool;
let sessions: DbosSessions;
let interrupts: DbosInterrupts;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
  sessions = new DbosSessions(pool, schema);
  await sessions.migrate();
  interrupts = new DbosInterrupts(pool, schema);
  await interrupts.migrate();
});

afterAll(async () => {
  await pool?.end();
  await dropSchema(schema);
});

const view = (state: string, workflowId?: string): DbosSessionView => ({
  sessionId: 's',
  state,
  turn: 1,
  pendingApprovals: [],
  ...(workflowId ? { workflowId } : {}),
});
const snapshotOf = (turn: number) => ({ status: 'active', value: 'Completed', context: { turn } });
/** Turn `workflowId` (re)starts: the snapshot it starts from. */
const begin = async (agent: string, id: string, workflowId: string) =>
  (await sessions.start(agent, id, workflowId, view('Thinking', workflowId))).snapshot;

describe('DbosSessions under replay', () => {
  it('a replayed turn starts from the snapshot its first execution started from, and sets no view back', async () => {
    // Turn wf-1, the session's first: nothing to start from.
    expect(await begin('a', 's1', 'wf-1')).toBeUndefined();
    expect((await sessions.load('a', 's1'))?.view?.state).toBe('Thinking');
    await sessions.end('a', 's1', 'wf-1', {
      view: view('Completed'),
      snapshot: snapshotOf(1),
      result: { n: 1 },
    });
    // wf-1 replayed after its end ran (killed before DBOS recorded the workflow's end): the same start,
    // the view stays, and its end written again keeps what the next turn needs.
    expect(await begin('a', 's1', 'wf-1')).toBeUndefined();
    expect((await sessions.load('a', 's1'))?.view?.state).toBe('Completed');
    await sessions.end('a', 's1', 'wf-1', {
      view: view('Completed'),
      snapshot: snapshotOf(1),
      result: { n: 1 },
    });
    expect(await begin('a', 's1', 'wf-1')).toBeUndefined();

    // Turn wf-2 starts from wf-1's end, waits for approval, and is replayed at every point.
    expect(await begin('a', 's1', 'wf-2')).toEqual(snapshotOf(1));
    await sessions.write('a', 's1', { view: view('WaitingApproval', 'wf-2') });
    // Replayed in the wait: the view of the wait stays (a client answers the call it names).
    expect(await begin('a', 's1', 'wf-2')).toEqual(snapshotOf(1));
    expect((await sessions.load('a', 's1'))?.view?.state).toBe('WaitingApproval');
    await sessions.end('a', 's1', 'wf-2', {
      view: view('Completed'),
      snapshot: snapshotOf(2),
      result: { n: 2 },
    });
    // Replayed after its end, twice: still from wf-1's snapshot.
    for (let i = 0; i < 2; i++) {
      expect(await begin('a', 's1', 'wf-2')).toEqual(snapshotOf(1));
      await sessions.end('a', 's1', 'wf-2', {
        view: view('Completed'),
        snapshot: snapshotOf(2),
        result: { n: 2 },
      });
    }
    // The next turn starts from wf-2's end.
    expect(await begin('a', 's1', 'wf-3')).toEqual(snapshotOf(2));
    expect(await sessions.load('a', 's1')).toMatchObject({ snapshot: snapshotOf(2), result: { n: 2 } });
    expect((await sessions.load('a', 's1'))?.view?.workflowId).toBe('wf-3');
  });

  it('keeps agents apart, and migrates a table made before the replay columns', async () => {
    expect(await begin('b', 's1', 'wf-9')).toBeUndefined();
    expect(await begin('b', 's1', 'wf-9')).toBeUndefined();
    const old = freshSchema('dbos');
    try {
      await pool.query(`CREATE SCHEMA "${old}"`);
      await pool.query(
        `CREATE TABLE "${old}".sessions (agent text NOT NULL, session_id text NOT NULL,
          snapshot json, view json, result json, updated_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (agent, session_id))`,
      );
      await pool.query(
        `INSERT INTO "${old}".sessions (agent, session_id, snapshot, view) VALUES ('a', 's', $1, $2)`,
        [JSON.stringify(snapshotOf(4)), JSON.stringify(view('Completed'))],
      );
      const migrated = new DbosSessions(pool, old);
      await migrated.migrate();
      await new DbosInterrupts(pool, old).migrate();
      expect((await migrated.start('a', 's', 'wf-1', view('Thinking', 'wf-1'))).snapshot).toEqual(
        snapshotOf(4),
      );
    } finally {
      await dropSchema(old);
    }
  });

  it("reads an interrupt asked of the turn with its start, and clears it at the turn's end", async () => {
    expect((await sessions.start('a', 'i1', 'wf-i', view('Thinking', 'wf-i'))).interrupt).toBeUndefined();
    await interrupts.ask('wf-i', undefined, 'test');
    // A resumed attempt hears it (asked without a reason).
    expect((await sessions.start('a', 'i1', 'wf-i', view('Thinking', 'wf-i'))).interrupt).toEqual({
      reason: undefined,
    });
    await interrupts.ask('wf-j', 'stop', 'test');
    expect((await sessions.start('a', 'i2', 'wf-j', view('Thinking', 'wf-j'))).interrupt).toEqual({
      reason: 'stop',
    });
    await sessions.end('a', 'i1', 'wf-i', { view: view('Interrupted'), snapshot: snapshotOf(1), result: {} });
    expect([...(await interrupts.asked(['wf-i', 'wf-j'])).keys()]).toEqual(['wf-j']);
  });

  it("skips the WAL flush wait for the start's commit only: the connection's setting stays", async () => {
    const one = new pg.Pool({ connectionString: postgresUrl(), max: 1 });
    try {
      const local = new DbosSessions(one, schema);
      // (The tests' cluster runs with it off: on for this connection.)
      await one.query('SET synchronous_commit = on');
      await local.start('a', 'c1', 'wf-c', view('Thinking', 'wf-c'));
      // The connection's own setting is untouched: the turn's end, on it next, waits for the flush.
      expect((await one.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
    } finally {
      await one.end();
    }
  });

  it("prepares a turn's statements once per connection (named, not parsed and planned each turn)", async () => {
    const one = new pg.Pool({ connectionString: postgresUrl(), max: 1 });
    try {
      const local = new DbosSessions(one, schema);
      const watch = new DbosInterrupts(one, schema);
      for (const wf of ['wf-p1', 'wf-p2']) {
        await local.start('a', 'p1', wf, view('Thinking', wf));
        await watch.asked([wf]);
        await local.end('a', 'p1', wf, { view: view('Completed'), snapshot: snapshotOf(1), result: {} });
      }
      const { rows } = await one.query(
        "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'agentloop_%'",
      );
      expect(rows[0].n).toBe(3);
    } finally {
      await one.end();
    }
  });

  it("commits the end without its own flush wait only when DBOS's table in this database holds the turn", async () => {
    const dbos = freshSchema('dbossys');
    const one = new pg.Pool({ connectionString: postgresUrl(), max: 1 });
    try {
      const local = new DbosSessions(one, schema, dbos);
      await one.query('SET synchronous_commit = on');
      const end = (workflowId: string) =>
        local.end('a', 'r1', workflowId, { view: view('Completed'), snapshot: snapshotOf(1), result: {} });
      // No DBOS tables in this database (DBOS's system database elsewhere): the end waits for its flush.
      expect(await local.findDbosTables()).toBe(false);
      expect(await end('wf-r')).toEqual({ relaxed: false });
      // DBOS's status table here, as DBOS makes it when its system database is this one.
      await one.query(`CREATE SCHEMA "${dbos}"`);
      await one.query(`CREATE TABLE "${dbos}".workflow_status (workflow_uuid text PRIMARY KEY, status text)`);
      await one.query(`INSERT INTO "${dbos}".workflow_status VALUES ('wf-r', 'PENDING')`);
      expect(await local.findDbosTables()).toBe(true);
      expect(await end('wf-r')).toEqual({ relaxed: true });
      // A workflow it does not hold (its tables are another DBOS's): the flush is waited for.
      expect(await end('wf-other')).toEqual({ relaxed: false });
      expect(await local.load('a', 'r1')).toMatchObject({ snapshot: snapshotOf(1), result: {} });
      // The setting was the statement's: the connection's stays.
      expect((await one.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
    } finally {
      await one.end();
      await dropSchema(dbos);
    }
  });

  it('writes the wait and the end of a turn whose start was lost (a PostgreSQL crash before its flush)', async () => {
    await sessions.write('a', 'lost1', { view: view('WaitingApproval', 'wf-l') });
    expect((await sessions.load('a', 'lost1'))?.view?.state).toBe('WaitingApproval');
    await sessions.end('a', 'lost2', 'wf-m', {
      view: view('Completed'),
      snapshot: snapshotOf(1),
      result: { n: 1 },
    });
    expect(await sessions.load('a', 'lost2')).toMatchObject({ snapshot: snapshotOf(1), result: { n: 1 } });
    // Its replay starts from what it started from: nothing.
    expect(await begin('a', 'lost2', 'wf-m')).toBeUndefined();
    expect(await begin('a', 'lost2', 'wf-n')).toEqual(snapshotOf(1));
  });
});
