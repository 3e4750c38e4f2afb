import type { SessionStore, TranscriptEntry } from './session-imports.js';
import type { TranscriptFeed } from './transcript-feed.js';

/** Where a follower reads a session's transcript as it grows. */
export interface FollowOptions {
  store: SessionStore;
  sessionId: string;
  /** Entries up to this seq are skipped (0: from the start). */
  after: number;
  /**
   * The feed of the process carrying the session's turn, when it is this one: its entries arrive as
   * they are written. While it is given and `local()` says it still carries the turn, nothing is polled.
   */
  feed?: TranscriptFeed;
  local?: () => boolean;
  /** How often the transcript is read again while another process writes it (ms). */
  pollMs: number;
  /** Stops following (a closed connection). */
  signal?: AbortSignal;
}

/**
 * A session's transcript from `after` on, then its entries as they are written, in seq order and each
 * once: from the carrying process's feed when it is this one, else by reading the transcript again
 * every `pollMs`, in any process sharing the store. The caller stops by returning from its loop (or
 * with `signal`). Shared by every protocol that replays a turn then goes live (A2A subscribe).
 */
export async function* followTranscript(options: FollowOptions): AsyncGenerator<TranscriptEntry> {
  const heard: TranscriptEntry[] = [];
  let wake = () => {};
  const stop = options.feed?.listen((entries) => {
    heard.push(...entries);
    wake();
  });
  const onAbort = () => wake();
  options.signal?.addEventListener('abort', onAbort);
  let sent = options.after;
  try {
    const { entries } = await options.store.readTranscript(options.sessionId);
    for (const entry of entries) {
      if (entry.seq <= sent) continue;
      sent = entry.seq;
      yield entry;
    }
    while (!options.signal?.aborted) {
      for (const entry of heard.splice(0)) {
        if (entry.seq <= sent) continue;
        sent = entry.seq;
        yield entry;
      }
      const local = options.feed !== undefined && (options.local?.() ?? true);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, options.pollMs);
      });
      if (local || options.signal?.aborted) continue;
      const again = await options.store.readTranscript(options.sessionId);
      for (const entry of again.entries) {
        if (entry.seq <= sent) continue;
        sent = entry.seq;
        yield entry;
      }
    }
  } finally {
    stop?.();
    options.signal?.removeEventListener('abort', onAbort);
  }
}
