import { expect } from 'vitest';
import { BundleError } from '../../src/bundle/bundle-error.js';

/** Awaits a sandbox call that must be refused with a {@link BundleError}, and returns the error. */
export async function refusal(promise: Promise<unknown>): Promise<BundleError> {
  const error = await promise.then(
    () => new Error('expected a refusal, the call succeeded'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}
