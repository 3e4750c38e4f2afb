import assert from 'node:assert/strict';
import { SessionStoreError, type SessionStoreErrorCode } from '../session/session-store-error.js';

/**
 * Awaits a call that must fail with a {@link SessionStoreError} of `code`, and returns the error for
 * further checks of its message.
 */
export async function refusal(
  call: Promise<unknown>,
  code: SessionStoreErrorCode,
): Promise<SessionStoreError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) {
    assert.fail(
      `expected a SessionStoreError "${code}", but the call returned ${JSON.stringify(outcome.value)}`,
    );
  }
  const { error } = outcome;
  assert.ok(
    error instanceof SessionStoreError,
    `expected a SessionStoreError "${code}", got ${String(error)}`,
  );
  assert.equal(error.code, code, `error code of: ${error.message}`);
  return error;
}

/**
 * Checks that `actual` has every field of `expected`, recursively (arrays element by element, same
 * length); fields `expected` does not name may be anything. Like Vitest's `toMatchObject`.
 */
export function assertMatches(actual: unknown, expected: unknown, where = 'value'): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${where}: length`);
    for (const [i, item] of expected.entries()) assertMatches(actual[i], item, `${where}[${i}]`);
    return;
  }
  if (typeof expected === 'object' && expected !== null) {
    assert.ok(
      typeof actual === 'object' && actual !== null,
      `${where}: expected an object, got ${JSON.stringify(actual)}`,
    );
    for (const [key, value] of Object.entries(expected)) {
      assertMatches((actual as Record<string, unknown>)[key], value, `${where}.${key}`);
    }
    return;
  }
  assert.equal(actual, expected, where);
}

/** Checks that `text` is an ISO time `Date.parse` reads. */
export function assertTime(text: unknown, where: string): void {
  assert.equal(typeof text, 'string', `${where}: expected an ISO time string`);
  assert.ok(!Number.isNaN(Date.parse(text as string)), `${where}: ${String(text)} is not a time`);
}
