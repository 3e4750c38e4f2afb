// What the durable-engine benches (engines.mjs, engines-count.mjs, dbos-statement-time.mjs,
// dbos-turn-timeline.mjs) share besides their session shapes (engine-shapes.mjs): their flags and a
// throwaway PostgreSQL cluster with fsync on, a database of its own per use.
import pg from 'pg';
import { startPostgresCluster } from '../../test/support/postgres-cluster.mjs';

/** The command line's `--name=value` flags, by the benches' one parser (`--name` alone is `'true'`). */
export { flagArgs as benchArgs } from './flags.mjs';

/** `--only=a,b` as a set of names, `all` (comma-separated) when it is not given. */
export function onlyOf(args, all) {
  return new Set((args.only ?? all).split(','));
}

/**
 * Starts a cluster as the engines run in production (fsync on); `database(name)` creates a database
 * on it and resolves with its URL; `stop()` stops the cluster. `settings`: extra `name=value` server settings.
 */
export async function startBenchCluster({ settings } = {}) {
  const cluster = await startPostgresCluster({ durable: true, settings });
  return {
    cluster,
    async database(name) {
      const admin = new pg.Client(cluster.url);
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      const url = new URL(cluster.url);
      url.pathname = `/${name}`;
      return url.href;
    },
    stop: () => cluster.stop(),
  };
}
