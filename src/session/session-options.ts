import type { SessionLease } from './session-lease.js';
import type { SessionRecord, SessionStore } from './session-store.js';
import type { TranscriptEntry } from './transcript.js';

/** The session options of `createAgent`. */
export interface SessionOptions {
  /**
   * Where sessions are saved. Default when `session` is given: a `FileSessionStore` in the working
   * directory (`.agentloop/sessions/`, or `$AGENTLOOP_HOME/sessions`).
   */
  store?: SessionStore;
  /**
   * The session to continue: restored when the store has it, created under this id when not.
   * Without it (but with a `store`) a new session with a fresh id is created.
   */
  session?: string;
  /** What session lists show besides the agent's name: where it came from and free-form JSON. */
  sessionInfo?: { bundle?: string; meta?: Record<string, unknown> };
  /**
   * How long the session's lease lasts unless renewed (default `DEFAULTS.leaseMs`): the agent holds
   * the session from `ready()` to `stop()`, renewing every third of it; another process gets
   * "session in use by pid N" meanwhile (docs/scale-out.md).
   */
  leaseMs?: number;
  /** A lease already held for this session (a worker's claim): used, renewed and released instead of taking one. */
  lease?: SessionLease;
  /**
   * The session's record as the caller just loaded it (`null`: it has none), used instead of loading
   * it again (a worker loads it to choose the agent's options).
   */
  sessionRecord?: SessionRecord | null;
  /**
   * Hears the current session's transcript entries as the restore read them (not called for a new
   * session), so that a caller that needs them (a worker: which inbox items were applied) does not
   * read the transcript again.
   */
  onSessionLoaded?: (entries: readonly TranscriptEntry[]) => void;
}

/**
 * Hears every failed write (a transcript append or a save), once per failed store call; `what` names
 * the write and the file, e.g. `appending 2 entries to /…/transcript.jsonl`. The agent ends the
 * running turn in Error with it (docs/persistence.md, "When a write fails").
 */
export type PersistenceErrorHandler = (error: unknown, what: string) => void;
