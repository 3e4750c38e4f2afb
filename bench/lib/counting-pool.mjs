// A pg.Pool whose statements are counted by kind (the first words of the SQL), for the Postgres bench
// and its profile: how many round trips a rest point, a tool call or a claim costs.
import pg from 'pg';

/** The kind of a statement: its verb and, for writes, the table it names first. */
export function statementKind(text) {
  const sql = text.replace(/\s+/g, ' ').trim();
  const verb = sql.split(' ')[0].toUpperCase();
  const table = /"(sessions|transcript|inbox|migrations)"/.exec(sql)?.[1] ?? '';
  if (verb === 'WITH')
    return `WITH ${table}${/INSERT INTO "?\w*"?\."?transcript/.test(sql) ? '>transcript' : ''}`;
  if (verb === 'BEGIN' || verb === 'COMMIT' || verb === 'ROLLBACK' || verb === 'LISTEN') return verb;
  return `${verb} ${table}`.trim();
}

/** A pool counting its statements into `counts` (SQL text -> number; see {@link countsByKind}). */
export function countingPool(connectionString, max, counts) {
  const pool = new pg.Pool({ connectionString, max });
  pool.on('error', () => {});
  // Every statement, pool.query's included, goes through a client's query. Counted by text (cheap:
  // the texts are the store's constants); classified when reported.
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (text, ...rest) => {
      const key = typeof text === 'string' ? text : text.text;
      counts[key] = (counts[key] ?? 0) + 1;
      return query(text, ...rest);
    };
  });
  return pool;
}

/** Counts by SQL text summed by {@link statementKind}. */
export function countsByKind(...countsList) {
  const kinds = {};
  for (const counts of countsList)
    for (const [text, n] of Object.entries(counts)) {
      const kind = statementKind(text);
      kinds[kind] = (kinds[kind] ?? 0) + n;
    }
  return kinds;
}
