import path from 'node:path';
import { LEASE_FILE, LeaseFile } from './lease-file.js';
import type { SlotsState } from './snapshot-file.js';
import { TRANSCRIPT_FILE, TranscriptAppender } from './transcript-file.js';

/**
 * What a file store knows of one session's files: the state its write queue carries. Kept while the
 * session is busy, leased by the store or among the most recently used idle ones (the appender's last
 * `seq` costs a read of the whole transcript to learn again); forgotten beyond, as a new process knows
 * nothing.
 */
export interface SessionFileState {
  readonly id: string;
  /** Writes the transcript; knows its last `seq` once it has read the file. */
  transcript: TranscriptAppender;
  /** The record's slot files, once read (again after a lease is taken: another owner may have written). */
  slots: SlotsState | undefined;
  /** Whether leftover temp files of crashed saves have been removed. */
  swept: boolean;
  /** The session's lease (lock) file. */
  lease: LeaseFile;
  /** Until when (ms since the epoch) the store holds the session's lease, as far as it knows; 0 when it does not. */
  heldUntil: number;
}

/** What a store knows of session `id`'s files in folder `dir` before it has looked at them. */
export function freshSessionFileState(
  dir: string,
  id: string,
  options: { fsync: boolean; now: () => Date },
): SessionFileState {
  const transcript = new TranscriptAppender(path.join(dir, TRANSCRIPT_FILE), id, options);
  const lease = new LeaseFile(dir, path.join(dir, LEASE_FILE), id, options.fsync);
  return { id, transcript, slots: undefined, swept: false, lease, heldUntil: 0 };
}

/** Whether the store holds the session's lease (taken or renewed by it, not released, not lapsed). */
export function leaseHeld(session: SessionFileState): boolean {
  return session.heldUntil > Date.now(); // 0: not held
}
