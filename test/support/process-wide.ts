/**
 * What makes a test file unfit for the shared project (vitest.config.ts): each changes something
 * process-wide that outlives the file, or reads something another file's leftovers change.
 */
const PROCESS_WIDE: [RegExp, string][] = [
  [
    /process\.env(\.\w+|\[[^\]]+\])\s*(=(?!=)|\?\?=|\|\|=)|delete\s+process\.env/,
    'sets an environment variable',
  ],
  [
    /vi\.(stubEnv|stubGlobal|spyOn|mock|doMock|useFakeTimers|setSystemTime)\b/,
    'stubs, spies, mocks or fakes time',
  ],
  [/process\.chdir\(|process\.umask\(/, "changes the process's folder or umask"],
  [/process\.(on|once|addListener|prependListener)\(/, 'adds a process listener'],
  [/\bsetGlobal\w*\(|globalThis\.\w+\s*=(?!=)/, 'sets a global'],
  [/console\.\w+\s*=(?!=)/, 'replaces a console method'],
  [
    /\bwatchCrashes\(|\binMemoryTracing\(|\bcountingAbortControllers\(/,
    'uses a test/support helper that sets process-wide state',
  ],
  [/\bDBOS\.(launch|setConfig)\(/, 'launches DBOS (one per process)'],
  [/\bworkSnapshot\(/, 'reads process-wide work counters'],
];

/** Why `source` may not run in the shared project: the reasons found, none when it may. */
export function processWideChanges(source: string): string[] {
  return PROCESS_WIDE.filter(([pattern]) => pattern.test(source)).map(([, why]) => why);
}
