/**
 * How long {@link waitUntil} waits by default: generous, for a machine loaded by other work, and
 * under the suite's 30 s test timeout, so that a condition that never holds fails naming itself.
 */
export const WAIT_UNTIL_MS = 20_000;

/**
 * Resolves once `check` holds, looking every 10 ms; rejects after `timeoutMs` with an error naming
 * `what`. For a condition a test cannot await directly (a count a server or another process
 * changes, a state reached in the background): wait on it, never on a sleep.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what = 'the condition',
  timeoutMs = WAIT_UNTIL_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
