import { expect } from 'vitest';
import { BundleError, type BundleErrorCode } from '../../src/bundle/bundle-error.js';

/** Awaits a sandbox call that must be refused with a {@link BundleError}, and returns the error. */
export async function refusal(promise: Promise<unknown>): Promise<BundleError> {
  const error = await promise.then(
    () => new Error('expected a refusal, the call succeeded'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

/** What a refusal must carry: its code, the file asked for, what its message names. */
export interface ExpectedRefusal {
  code: BundleErrorCode;
  file: string;
  /** How the message shows the file, when not as given (a null byte is escaped). */
  shown?: string;
  /** Paths, error codes and kinds of thing the message must name (not its sentence). */
  names?: readonly string[];
  /**
   * Whether this is a read's refusal (`Access denied: ...`, nothing was read) or a write's (`Write
   * refused: ...`, nothing was written).
   */
  outcome?: 'read' | 'written';
}

/**
 * Checks a refusal against what it must carry. Its message names the file asked for and each of
 * `names`, and never prints `undefined` (a missing error code).
 */
export function expectRefusal(error: BundleError, expected: ExpectedRefusal): void {
  expect({ code: error.code, file: error.file }).toEqual({ code: expected.code, file: expected.file });
  for (const name of [expected.shown ?? expected.file, ...(expected.names ?? [])])
    expect(error.message).toContain(name);
  expect(error.message).not.toContain('undefined');
  if (expected.outcome) {
    const other = expected.outcome === 'read' ? 'written' : 'read';
    expect(error.message).toMatch(expected.outcome === 'read' ? /^Access denied: / : /^Write refused: /);
    expect(error.message).toMatch(new RegExp(`\\b${expected.outcome}\\b`));
    expect(error.message).not.toMatch(new RegExp(`\\b${other}\\b`));
  }
}
