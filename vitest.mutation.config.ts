import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// The tests Stryker runs (stryker.config.mjs, docs/testing.md). Left out: test files that run the
// built dist/ or another process (they cannot see a mutant in src/), or need the PostgreSQL cluster,
// tmux or a browser (slow to start for every mutant on 2 cores). Found by what the files import.
const OUT_OF_PROCESS = /buildDist|cliPath|support\/(tmux|postgres|cli-process|inspector-page)|playwright/;
const outOfProcess = readdirSync('test')
  .filter((file) => file.endsWith('.test.ts') && OUT_OF_PROCESS.test(readFileSync(`test/${file}`, 'utf8')))
  .map((file) => `test/${file}`);

// MUTATION_TESTS=test/a.test.ts,test/b*.test.ts runs only those: a quicker run whose score is a lower
// bound of the whole suite's (more tests can only kill more mutants).
const only = process.env.MUTATION_TESTS?.split(',').filter(Boolean);

export default defineConfig({
  test: {
    include: only ?? ['test/**/*.test.ts'],
    exclude: ['test/corpus/**', '**/node_modules/**', ...outOfProcess],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // As in vitest.config.ts: `rejects.toThrow(x)` fails on a rejection with `undefined` or `null`.
    setupFiles: ['test/support/strict-rejects.ts'],
    // Stryker refuses to start when a test fails in its first run; under a mutation run's load a
    // timing-bound test (the model-based walk) can miss its wait once. A mutant fails every try.
    retry: 1,
  },
});
