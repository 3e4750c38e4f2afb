import type pg from 'pg';

/** What `pg` and the socket say when PostgreSQL cannot be reached or went away mid-query. */
const GONE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
]);

/** Where a pool or a connection string points, without the password: `host:port/database`. */
export function databaseAddress(target: pg.Pool | string): string {
  const options: pg.PoolConfig = typeof target === 'string' ? { connectionString: target } : target.options;
  if (options.connectionString) {
    try {
      const url = new URL(options.connectionString);
      return `${url.hostname}:${url.port || 5432}${url.pathname}`;
    } catch {
      return 'the configured database';
    }
  }
  return `${options.host ?? 'localhost'}:${options.port ?? 5432}/${options.database ?? ''}`;
}

/**
 * The error to throw for `error`: when it says PostgreSQL cannot be reached, one naming the engine's
 * database and what was being done; otherwise `error` itself.
 */
export function whenUnreachable(error: unknown, target: pg.Pool | string, doing: string): unknown {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  const gone = (code !== undefined && GONE_CODES.has(code)) || /^Connection terminated/.test(message ?? '');
  if (!gone) return error;
  return new Error(
    `agentloop/dbos: cannot reach PostgreSQL at ${databaseAddress(target)} (${doing}): ${code ?? message}`,
    { cause: error },
  );
}
