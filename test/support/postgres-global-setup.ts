import type { TestProject } from 'vitest/node';
import { type PostgresCluster, startPostgresCluster } from './postgres-cluster.mjs';

declare module 'vitest' {
  interface ProvidedContext {
    /** The throwaway cluster the Postgres tests share, or why it could not start. */
    postgres: { url: string; error?: undefined } | { url?: undefined; error: string };
  }
}

/** The run's cluster, shared by every project of the run (each runs this setup): started once, stopped by the last. */
interface SharedCluster {
  started: Promise<PostgresCluster>;
  users: number;
}
const SHARED = Symbol.for('agentloop.test.postgres-cluster');
const holder = globalThis as { [SHARED]?: SharedCluster };

/**
 * vitest globalSetup: one throwaway PostgreSQL cluster for the whole run (each test file works in
 * schemas of its own), stopped at the end. vitest calls it once per project (vitest.config.ts has
 * two); the projects share one cluster, kept on `globalThis` of the main process. When it cannot
 * start (no binaries), the Postgres tests fail with the reason (naming the package to install); the
 * other tests are not affected.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  holder[SHARED] ??= { started: startPostgresCluster({ durable: false }), users: 0 };
  const shared = holder[SHARED];
  shared.users += 1;
  try {
    project.provide('postgres', { url: (await shared.started).url });
  } catch (error) {
    project.provide('postgres', { error: (error as Error).message });
  }
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await (await shared.started.catch(() => undefined))?.stop();
  };
}
