import type { Message } from '../llm/message.js';
import type { PersistedAgentSnapshot } from '../machines/agent-snapshot.js';
import { type CompactionRecord, compactionProblem } from '../prompt/compaction.js';
import type { TranscriptEntry, TranscriptEntryInput } from './transcript.js';

/** The `event` name of the transcript entry written when the conversation is compacted. */
export const COMPACTION_EVENT = 'compaction';

/**
 * The `data` of a `compaction` transcript entry: the summary and the messages it stands for (`from` to
 * `through`, exclusive: positions in the conversation, i.e. among the transcript's `message` entries
 * after `session_started`), their first and last `seq` when known, the token estimates, the model.
 * Every message stays in the transcript; this entry says what requests send in their place.
 */
export interface CompactionData extends CompactionRecord {
  turn: number;
  iteration: number;
}

/** The transcript entry of a compaction, written after the messages it covers. */
export function compactionEntry(
  record: CompactionRecord,
  turn: number,
  iteration: number,
): TranscriptEntryInput {
  const data: CompactionData = { ...record, turn, iteration };
  return { kind: 'event', event: COMPACTION_EVENT, data };
}

/** Whether `record` is a summary the transcript does not have yet (`known`: the last one written or restored). */
export function isNewCompaction(
  record: CompactionRecord | null,
  known: CompactionRecord | null | undefined,
): record is CompactionRecord {
  return record !== null && !(known && known.summary === record.summary && known.through === record.through);
}

/** What a restore found about the summary in effect. */
export interface RestoredCompaction {
  record: CompactionRecord | null;
  /** Why the last `compaction` entry was not used (the session restores with pruning). */
  problem?: string;
  /** The `seq` of the first and last message entries it covers. */
  seqs?: { from: number; through: number };
}

/**
 * The summary in effect after `entries` (the current session's): that of the last `compaction` entry,
 * checked against the rebuilt conversation (a transcript is hostile input). A corrupt or missing one
 * gives none: the requests then send the whole conversation, pruned to fit.
 */
export function compactionFromTranscript(
  entries: readonly TranscriptEntry[],
  messages: readonly Message[],
): RestoredCompaction {
  let last: TranscriptEntry | undefined;
  for (let i = entries.length - 1; i >= 0 && !last; i--) {
    const entry = entries[i]!;
    if (entry.kind === 'event' && entry.event === COMPACTION_EVENT) last = entry;
  }
  if (last?.kind !== 'event') return { record: null };
  const problem = compactionProblem(last.data, messages);
  if (problem) return { record: null, problem: `the compaction entry (seq ${last.seq}): ${problem}` };
  const data = last.data as CompactionData;
  const record: CompactionRecord = {
    summary: data.summary,
    from: data.from,
    through: data.through,
    tokensBefore: data.tokensBefore,
    tokensAfter: data.tokensAfter,
    model: data.model,
  };
  const seqs = messageSeqs(entries, record.from, record.through - 1);
  return seqs ? { record, seqs } : { record };
}

/** The seq of the message entries at positions `first` and `last` of the conversation. */
function messageSeqs(entries: readonly TranscriptEntry[], first: number, last: number) {
  let index = 0;
  let from: number | undefined;
  for (const entry of entries) {
    if (entry.kind !== 'message') continue;
    if (index === first) from = entry.seq;
    if (index === last && from !== undefined) return { from, through: entry.seq };
    index++;
  }
  return undefined;
}

/** The restored snapshot with the summary the transcript says is in effect (none when it says none). */
export function withRestoredCompaction(
  snapshot: PersistedAgentSnapshot,
  restored: RestoredCompaction,
): PersistedAgentSnapshot {
  if (snapshot.context.compaction === restored.record) return snapshot;
  return { ...snapshot, context: { ...snapshot.context, compaction: restored.record } };
}
