import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL cluster for the tests that need it (test/support/postgres-cluster.mjs).
    globalSetup: ['test/support/postgres-global-setup.ts'],
    // `rejects.toThrow(x)` fails on a rejection with `undefined` or `null` (test/support/strict-rejects.ts).
    setupFiles: ['test/support/strict-rejects.ts'],
    // Tests of the shared corpus (../shared/corpus) run apart: `npm run test:corpus` (vitest.corpus.config.ts).
    // `npm test` needs nothing beside the repository.
    exclude: ['test/corpus/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real HTTP servers, real processes and real browsers: keep parallelism modest on 2 cores.
    maxWorkers: 2,
  },
});
