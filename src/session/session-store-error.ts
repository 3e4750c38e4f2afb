/** Why a store call failed. */
export type SessionStoreErrorCode =
  /** The id cannot be a folder name. */
  | 'invalid_id'
  /** A stored file does not parse or lacks required fields. */
  | 'corrupt'
  /** A file was written by a newer version of the store. */
  | 'unsupported_version'
  /** The caller's value cannot be stored as JSON (BigInt, a cycle). */
  | 'not_serializable'
  /** The file system refused (only in `list` rows; other calls throw the system error itself). */
  | 'io'
  /** Another owner (process, worker) holds the session's lease. */
  | 'in_use'
  /** The caller's lease was taken over by another owner: its write was refused (fencing). */
  | 'stale_lease';

/** A store failure that names the session and, for files, the file (and line). */
export class SessionStoreError extends Error {
  override readonly name = 'SessionStoreError';
  readonly code: SessionStoreErrorCode;
  readonly sessionId: string | undefined;
  readonly file: string | undefined;
  readonly line: number | undefined;

  constructor(
    code: SessionStoreErrorCode,
    message: string,
    details: { sessionId?: string; file?: string; line?: number; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.sessionId = details.sessionId;
    this.file = details.file;
    this.line = details.line;
  }
}
