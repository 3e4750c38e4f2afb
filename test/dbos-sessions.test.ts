import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbosSessions, type DbosSessionView } from '../src/engines/dbos/dbos-sessions.js';
import { dropSchema, freshSchema, postgresUrl } from './support/postgres.js';

// The DBOS adapter's sessions table, written by a turn workflow with plain statements (not DBOS
// steps): each write must be safe to run again when DBOS replays the turn after a crash. The real
// PostgreSQL of the run; a replay is the same workflow id calling the same writes again.

const schema = freshSchema('dbos');
let pool: pg.Pool;
let sessions: DbosSessions;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
  sessions = new DbosSessions(pool, schema);
  await sessions.migrate();
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

describe('DbosSessions under replay', () => {
  it('a replayed turn starts from the snapshot its first execution started from, and sets no view back', async () => {
    // Turn wf-1, the session's first: nothing to start from.
    expect(await sessions.snapshotFor('a', 's1', 'wf-1')).toBeUndefined();
    await sessions.begin('a', 's1', 'wf-1', view('Thinking', 'wf-1'));
    expect((await sessions.load('a', 's1'))?.view?.state).toBe('Thinking');
    await sessions.end('a', 's1', 'wf-1', {
      view: view('Completed'),
      snapshot: snapshotOf(1),
      result: { n: 1 },
    });
    // wf-1 replayed after its end ran (killed before DBOS recorded the workflow's end): the same start,
    // the view stays, and its end written again keeps what the next turn needs.
    expect(await sessions.snapshotFor('a', 's1', 'wf-1')).toBeUndefined();
    await sessions.begin('a', 's1', 'wf-1', view('Thinking', 'wf-1'));
    expect((await sessions.load('a', 's1'))?.view?.state).toBe('Completed');
    await sessions.end('a', 's1', 'wf-1', {
      view: view('Completed'),
      snapshot: snapshotOf(1),
      result: { n: 1 },
    });
    expect(await sessions.snapshotFor('a', 's1', 'wf-1')).toBeUndefined();

    // Turn wf-2 starts from wf-1's end, waits for approval, and is replayed at every point.
    expect(await sessions.snapshotFor('a', 's1', 'wf-2')).toEqual(snapshotOf(1));
    await sessions.begin('a', 's1', 'wf-2', view('Thinking', 'wf-2'));
    await sessions.write('a', 's1', { view: view('WaitingApproval', 'wf-2') });
    // Replayed in the wait: the view of the wait stays (a client answers the call it names).
    await sessions.begin('a', 's1', 'wf-2', view('Thinking', 'wf-2'));
    expect((await sessions.load('a', 's1'))?.view?.state).toBe('WaitingApproval');
    expect(await sessions.snapshotFor('a', 's1', 'wf-2')).toEqual(snapshotOf(1));
    await sessions.end('a', 's1', 'wf-2', {
      view: view('Completed'),
      snapshot: snapshotOf(2),
      result: { n: 2 },
    });
    // Replayed after its end, twice: still from wf-1's snapshot.
    for (let i = 0; i < 2; i++) {
      expect(await sessions.snapshotFor('a', 's1', 'wf-2')).toEqual(snapshotOf(1));
      await sessions.end('a', 's1', 'wf-2', {
        view: view('Completed'),
        snapshot: snapshotOf(2),
        result: { n: 2 },
      });
    }
    // The next turn starts from wf-2's end.
    expect(await sessions.snapshotFor('a', 's1', 'wf-3')).toEqual(snapshotOf(2));
    expect(await sessions.load('a', 's1')).toMatchObject({ snapshot: snapshotOf(2), result: { n: 2 } });
  });

  it('keeps agents apart, and migrates a table made before the replay columns', async () => {
    await sessions.begin('b', 's1', 'wf-9', view('Thinking', 'wf-9'));
    expect(await sessions.snapshotFor('b', 's1', 'wf-9')).toBeUndefined();
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
      expect(await migrated.snapshotFor('a', 's', 'wf-1')).toEqual(snapshotOf(4));
    } finally {
      await dropSchema(old);
    }
  });
});
