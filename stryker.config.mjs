// Mutation testing (docs/testing.md): `npm run mutation -- <files or folders under src/>`. Not in CI:
// a folder takes minutes to an hour on two cores. Reports land in reports/mutation/.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  // Each mutant runs only the tests that reached its code in the first (dry) run.
  coverageAnalysis: 'perTest',
  // A mutant in code that runs when a module loads (a top-level constant) would need every test
  // that imports it, for every such mutant: left out, and counted in the report as ignored.
  ignoreStatic: true,
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 2),
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'reports', 'test-artifacts', 'bench/results', '.agentloop', 'inspector/public/js'],
};
