import type { ToolRunHooks } from './run-tools.js';

/**
 * Combines several `ToolRunHooks` (persistence, audit log, an embedder's own) into one.
 *
 * - `beforeRun` hooks run in the order given, each awaited. The first that returns a result (a call
 *   replayed from the transcript) wins: later hooks' `beforeRun` is not called, and the runner calls
 *   no `afterRun` for a call it did not run. Put hooks that may replay first.
 * - `afterRun` hooks run in the order given, each awaited; all of them run even if one throws, and
 *   then the first error is rethrown (the runner turns it into the call's error result).
 */
export function composeToolHooks(...hooks: (ToolRunHooks | undefined | null | false)[]): ToolRunHooks {
  const list = hooks.filter((h): h is ToolRunHooks => Boolean(h));
  const befores = list.flatMap((h) => (h.beforeRun ? [h.beforeRun.bind(h)] : []));
  const afters = list.flatMap((h) => (h.afterRun ? [h.afterRun.bind(h)] : []));
  const composed: ToolRunHooks = {};
  if (befores.length === 1) composed.beforeRun = befores[0]!;
  else if (befores.length > 1) {
    composed.beforeRun = async (call, input) => {
      for (const before of befores) {
        const recorded = await before(call, input);
        if (recorded) return recorded;
      }
      return undefined;
    };
  }
  if (afters.length === 1) composed.afterRun = afters[0]!;
  else if (afters.length > 1) {
    composed.afterRun = async (result, call, input) => {
      let failure: { error: unknown } | undefined;
      for (const after of afters) {
        try {
          await after(result, call, input);
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    };
  }
  return composed;
}
