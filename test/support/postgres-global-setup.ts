import type { TestProject } from 'vitest/node';
import { type PostgresCluster, startPostgresCluster } from './postgres-cluster.mjs';

declare module 'vitest' {
  interface ProvidedContext {
    /** The throwaway cluster the Postgres tests share, or why it could not start. */
    postgres: { url: string; error?: undefined } | { url?: undefined; error: string };
  }
}

/**
 * vitest globalSetup: one throwaway PostgreSQL cluster for the whole run (each test file works in
 * schemas of its own), stopped at the end. When it cannot start (no binaries), the Postgres tests
 * fail with the reason (naming the package to install); the other tests are not affected.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let cluster: PostgresCluster | undefined;
  try {
    cluster = await startPostgresCluster({ durable: false });
    project.provide('postgres', { url: cluster.url });
  } catch (error) {
    project.provide('postgres', { error: (error as Error).message });
  }
  return async () => {
    await cluster?.stop();
  };
}
