/** What went wrong, for callers that branch on it (the message is for people and models). */
export type BundleErrorCode =
  | 'not-found'
  | 'sandbox'
  | 'too-large'
  | 'parse'
  | 'missing-config-key'
  | 'unresolved-variable'
  | 'unknown-agent'
  | 'critical-action'
  | 'invalid-input';

/** Details attached to a {@link BundleError}. */
export interface BundleErrorDetails {
  /** The file the problem is in (or the file that was asked for). */
  file?: string;
  /** The key or variable involved, when there is one. */
  key?: string;
  cause?: unknown;
}

/**
 * The one error type of the bundle loader, the sandbox and the BMAD tools. Its message always names
 * the file and, where there is one, the key, because it is shown to users and to the model as is.
 */
export class BundleError extends Error {
  override readonly name = 'BundleError';
  readonly code: BundleErrorCode;
  readonly file: string | undefined;
  readonly key: string | undefined;

  constructor(code: BundleErrorCode, message: string, details: BundleErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.file = details.file;
    this.key = details.key;
  }
}

/** The message of any thrown value. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
