import { afterAll, beforeAll, beforeEach } from 'vitest';

/**
 * Collects every unhandled rejection and uncaught exception while the file's tests run (emptied
 * before each test), so that a test can check that nothing crashed: `expect(crashes).toEqual([])`.
 */
export function watchCrashes(): unknown[] {
  const crashes: unknown[] = [];
  const onCrash = (reason: unknown) => {
    crashes.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', onCrash);
    process.on('uncaughtException', onCrash);
  });
  afterAll(() => {
    process.off('unhandledRejection', onCrash);
    process.off('uncaughtException', onCrash);
  });
  beforeEach(() => {
    crashes.length = 0;
  });
  return crashes;
}
