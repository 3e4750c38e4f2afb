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

/** The latest run of a thread in its transcript `entries` (undefined when none was started). */
export function latestRun(entries: readonly TranscriptEntry[]): ThreadRun | undefined {
  const start = entries.findLastIndex((e) => e.kind === 'event' && e.event === RUN_STARTED_ENTRY);
  if (start < 0) return undefined;
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
