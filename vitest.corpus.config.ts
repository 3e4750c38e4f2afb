import { defineConfig } from 'vitest/config';

/**
 * `npm run test:corpus`: the tests that read the shared corpus of real BMAD trees beside the
 * repository (`../shared/corpus/bmad`). The setup stops with a plain message when it is missing.
 */
export default defineConfig({
  test: {
    include: ['test/corpus/**/*.test.ts'],
    globalSetup: ['test/corpus/corpus-present.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 2,
  },
});
