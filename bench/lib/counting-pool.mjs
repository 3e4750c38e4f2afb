// A pg.Pool whose statements are counted by kind (the first words of the SQL), for the Postgres bench
// and its profile: how many round trips a rest point, a tool call or a claim costs.
import pg from 'pg';

/** The kind of a statement: its verb and, for writes, the table it names first. */
export function statementKind(text) {
  const sql = text.replace(/\s+/g, ' ').trim();
  const verb = sql.split(' ')[0].toUpperCase();
  const table = /"(sessions|transcript|inbox|migrations)"/.exec(sql)?.[1] ?? '';
  if (verb === 'WITH') return `WITH ${table}${/INSERT INTO "?\w*"?\."?transcript/.test(sql) ? '>transcript' : ''}`;
  if (verb === 'BEGIN' || verb === 'COMMIT' || verb === 'ROLLBACK' || verb === 'LISTEN') return verb;
  return `${verb} ${table}`.trim();
}

/** A pool counting its statements into `counts` (kind -> number). */
export function countingPool(connectionString, max, counts) {
  const pool = new pg.Pool({ connectionString, max });
  pool.on('error', () => {});
  const count = (text) => {
    const kind = statementKind(typeof text === 'string' ? text : text.text);
    counts[kind] = (counts[kind] ?? 0) + 1;
  };
  // Every statement, pool.query's included, goes through a client's query.
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (text, ...rest) => {
      count(text);
      return query(text, ...rest);
    };
  });
  return pool;
}
