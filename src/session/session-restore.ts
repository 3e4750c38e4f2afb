import type { Message } from '../llm/message.js';
import { checkPersistedSnapshot } from '../machines/agent-snapshot.js';
import { compactionFromTranscript, withRestoredCompaction } from './compaction-entry.js';
import { type IdempotentRerun, rerunIdempotentCalls } from './idempotent-rerun.js';
import type { ReplayPlan } from './restore-plan.js';
import { exactMessages, expandSnapshot } from './saved-conversation.js';
import { corruptRecordError, type SessionRecord, type SessionStore } from './session-store.js';
import type { TranscriptEntry, TranscriptEntryInput } from './transcript.js';
import { transcriptLoss } from './transcript-loss.js';
import { currentEntries, planRestore } from './transcript-replay.js';
/** What {@link loadSession} needs. */
export interface LoadSessionInput {
  store: SessionStore;
  id: string;
  isIdempotent: (name: string) => boolean;
  /** Runs an idempotent call cut off by a crash again (same key); without it, such calls are reported. */
  rerun: IdempotentRerun | undefined;
  /** Appends to the session's transcript through its ordered writer (redacted), resolving once durable. */
  append: (entries: TranscriptEntryInput[]) => Promise<void>;
  /** The record as the caller just loaded it (`null`: it has none), so that it is not loaded again. */
  record?: SessionRecord | null;
}

/** A saved session as loaded: the plan of its restore and what was read to make it. */
export interface LoadedSession {
  record: SessionRecord;
  plan: ReplayPlan;
  /** The current session's transcript entries as the restore read them (with re-run results). */
  entries: TranscriptEntry[];
  /** Messages the transcript holds redacted, by position, as they were (kept by the next saves). */
  exact: Map<number, Message>;
}

/**
 * Loads a saved session and plans its restore (docs/persistence.md, "Restoring"): the record once,
 * the transcript once (its conversation, when the record refers to it, is checked here, once), and
 * idempotent calls cut off by a crash run again before the plan is made again with their results.
 * Undefined when the session has no record (a new one). Throws the store's error (naming the file)
 * when the session cannot be read, and a `corrupt` one naming the file and the field when its
 * snapshot does not fit the machine.
 */
export async function loadSession(input: LoadSessionInput): Promise<LoadedSession | undefined> {
  const { store, id, isIdempotent } = input;
  const record = input.record === undefined ? await store.load(id) : (input.record ?? undefined);
  if (record === undefined) return undefined;
  const files = store.files?.(id);
  const { entries: all } = await store.readTranscript(id);
  let entries = currentEntries(all);
  const expanded = expandSnapshot(record.snapshot, entries);
  const checked = checkPersistedSnapshot(expanded.snapshot);
  if (!checked.ok) throw corruptRecordError(id, files?.snapshot, `${checked.field}: ${checked.problem}`);
  const saved = checked.snapshot;
  const transcriptFile = files?.transcript ?? `the transcript of session "${id}"`;
  const lastSeq = all.at(-1)?.seq ?? 0;
  const lost =
    transcriptLoss(record.transcriptSeq, all, transcriptFile) ??
    // The record refers to more messages than the transcript holds (it was replaced by another).
    (expanded.missing > 0
      ? {
          status: 'truncated' as const,
          file: transcriptFile,
          expectedSeq: record.transcriptSeq,
          foundSeq: lastSeq,
        }
      : undefined);
  let plan = planRestore(saved, entries, isIdempotent, { lost });
  if (input.rerun) {
    // Idempotent calls cut off by a crash run again (same key); the plan is made again with their results.
    const rerun = await rerunIdempotentCalls(plan, entries, isIdempotent, input.rerun);
    if (rerun.finished.length > 0) {
      await input.append(rerun.finished);
      entries = currentEntries((await store.readTranscript(id)).entries);
      plan = planRestore(saved, entries, isIdempotent, { lost });
      for (const call of plan.report.calls) if (rerun.ids.has(call.toolCallId)) call.outcome = 'rerun';
    }
  }
  // The summary in effect is the transcript's (a crash may have come after a compaction and before a save).
  const compaction = compactionFromTranscript(entries, plan.snapshot.context.messages);
  plan.snapshot = withRestoredCompaction(plan.snapshot, compaction);
  if (compaction.problem) plan.report.compaction = { problem: compaction.problem };
  else if (compaction.record) {
    plan.report.compaction = {
      messages: compaction.record.through - compaction.record.from,
      ...(compaction.seqs ? { seqs: compaction.seqs } : {}),
    };
  }
  return { record, plan, entries, exact: exactMessages(record.snapshot, entries) };
}
