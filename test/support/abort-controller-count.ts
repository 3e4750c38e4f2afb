/**
 * Runs `body` with the global `AbortController` replaced by a subclass that counts the controllers
 * made (what `made()` reads while it runs), puts the global back after, and resolves with `body`'s
 * value and the count. Process-wide: test/support/process-wide.ts keeps a file that calls it out of
 * the shared project.
 */
export async function countingAbortControllers<T>(
  body: (made: () => number) => Promise<T>,
): Promise<{ value: T; made: number }> {
  const Original = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
  try {
    const value = await body(() => made);
    return { value, made };
  } finally {
    globalThis.AbortController = Original;
  }
}
