// Mutation testing (docs/testing.md): `npm run mutation -- <files or folders under src/>`. Not in CI:
// a folder takes minutes to an hour on two cores. Reports land in reports/mutation/.
/** Report name: MUTATION_REPORT=tools writes reports/mutation/tools.html (two runs side by side). */
const report = process.env.MUTATION_REPORT ?? 'mutation';

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
  htmlReporter: { fileName: `reports/mutation/${report}.html` },
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  clearTextReporter: { allowColor: false, logTests: false },
  tempDirName: `.stryker-tmp/${report}`,
  ignorePatterns: [
    '.stryker-tmp',
    'dist',
    'reports',
    'test-artifacts',
    'bench/results',
    '.agentloop',
    'inspector/public/js',
  ],
};
