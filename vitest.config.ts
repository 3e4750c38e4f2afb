import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL cluster for the tests that need it (test/support/postgres-cluster.mjs).
    globalSetup: ['test/support/postgres-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests start real HTTP servers, real processes and real browsers: keep parallelism modest on 2 cores.
    maxWorkers: 2,
  },
});
