// The small part of node-postgres (`pg` 8) the store uses, typed here so that the published
// declarations do not need `pg`'s types (pg is an optional peer dependency).

/** A query result. */
export interface PgResult<R = Record<string, unknown>> {
  rows: R[];
  rowCount: number | null;
}

/** Something that runs queries: a pool or a checked-out client. */
export interface PgQueryable {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PgResult<R>>;
}

/** A client checked out of a pool (transactions, LISTEN). */
export interface PgPoolClient extends PgQueryable {
  release(error?: Error | boolean): void;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** A `pg.Pool` (or anything shaped like one). */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
}

/** Runs `work` in a transaction on one client of the pool. */
export async function inTransaction<T>(pool: PgPool, work: (client: PgPoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
