import { SESSION_FORKED_EVENT } from '../../evals/fork-session.js';
import type { TranscriptEntry } from '../session-imports.js';
import { RUN_ENDED_ENTRY, RUN_STARTED_ENTRY } from './transcript-events.js';

/** A thread's latest AG-UI run as its transcript tells it. */
export interface ThreadRun {
  runId: string;
  /** The principal that started it (a new thread has no saved record to say whose it is yet). */
  principal: string | undefined;
  parentRunId: string | undefined;
  /** The run's client speaks AG-UI 1.0 (the shapes its end is sent in). */
  protocol10: boolean;
  /** Where its start entry is in `entries`. */
  start: number;
  /** Its end entry was written: the run is over. */
  ended: boolean;
}

/** The data of the transcript entry that opens a run. */
export interface RunStartData {
  runId: string;
  principal?: string;
  parentRunId?: string;
  protocol10?: boolean;
}

const isRunStart = (e: TranscriptEntry) => e.kind === 'event' && e.event === RUN_STARTED_ENTRY;
const isFork = (e: TranscriptEntry) => e.kind === 'event' && e.event === SESSION_FORKED_EVENT;

/**
 * The latest run of a thread in its transcript `entries` (undefined when none was started). A fork's
 * transcript begins with its parent's entries: the runs there are the parent's, not the fork's.
 */
export function latestRun(entries: readonly TranscriptEntry[]): ThreadRun | undefined {
  const start = entries.findLastIndex(isRunStart);
  if (start < 0 || entries.findLastIndex(isFork) > start) return undefined;
  const data = ((entries[start] as { data?: unknown }).data ?? {}) as Partial<RunStartData>;
  if (typeof data.runId !== 'string') return undefined;
  const runId = data.runId;
  const ended = entries
    .slice(start + 1)
    .some(
      (e) =>
        e.kind === 'event' &&
        e.event === RUN_ENDED_ENTRY &&
        (e.data as { runId?: unknown } | undefined)?.runId === runId,
    );
  return {
    runId,
    principal: typeof data.principal === 'string' ? data.principal : undefined,
    parentRunId: typeof data.parentRunId === 'string' ? data.parentRunId : undefined,
    protocol10: data.protocol10 === true,
    start,
    ended,
  };
}

/**
 * For a forked thread (`forkSession`) that has run nothing since the fork, the id of the parent's last
 * run before the cut: its first run names it as `parentRunId`.
 */
export function forkParentRunId(entries: readonly TranscriptEntry[]): string | undefined {
  const forked = entries.findLastIndex(isFork);
  if (forked < 0 || entries.findLastIndex(isRunStart) > forked) return undefined;
  const start = entries.slice(0, forked).findLastIndex(isRunStart);
  const runId = start < 0 ? undefined : (entries[start] as { data?: { runId?: unknown } }).data?.runId;
  return typeof runId === 'string' ? runId : undefined;
}
