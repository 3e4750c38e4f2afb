import type { PersistedAgentSnapshot } from '../machines/agent-snapshot.js';
import type { ConversationRepair } from './conversation-repair.js';
import type { ResumeDecision, TranscriptEntryInput } from './transcript.js';

// What a restore plans and reports, below the two planners (transcript-replay.ts for a transcript that
// goes on from the save, transcript-loss.ts for one that lost entries).

/** A transcript that lost entries the saved record says it had. */
export interface TranscriptLoss {
  /** `missing`: no entries at all (the file was deleted); `truncated`: fewer than the save says. */
  status: 'missing' | 'truncated';
  /** The transcript file (or the session, for stores without files). */
  file: string;
  /** `record.transcriptSeq`: the last entry the transcript had when the record was saved. */
  expectedSeq: number;
  /** The last `seq` found (0 when none). */
  foundSeq: number;
}

/** An approval answer as the transcript records it (`always`: the tool was allowed for the session). */
export interface RecordedApproval {
  toolCallId: string;
  approved: boolean;
  reason?: string;
  always?: boolean;
}

/** What a restore did about one call of the batch that was cut off. */
export interface RecoveredCall {
  toolCallId: string;
  name: string;
  /**
   * `recorded`: it had finished, the model gets the recorded result; `interrupted`: it started and no
   * result was recorded, the model is told; `not-run`: it never started, the model is told;
   * `rerun`: it will run again (its tool is idempotent, or it never started), when the restored batch runs.
   */
  outcome: 'recorded' | 'interrupted' | 'not-run' | 'rerun';
}

/** What `createAgent({ session })` found and did when it restored a session. */
export interface RestoreReport {
  /** The state the last save was taken in. */
  savedState: string;
  /** The state the agent is restored in: `Interrupted` when the transcript went past the last save. */
  state: string;
  /** Messages taken from the transcript that the saved snapshot did not hold yet. */
  replayedMessages: number;
  /** Calls of the batch that was running, and what was done about each. */
  calls: RecoveredCall[];
  /** Pending approvals answered before the stop, answered again the same way. */
  replayedApprovals: number;
  /**
   * Set when the transcript had a gap (entries a failed write lost, a file edited by hand): what the
   * restore changed so that the rebuilt conversation is one the API accepts.
   */
  repaired?: ConversationRepair;
  /**
   * Set when the transcript is missing or shorter than the save says (deleted, truncated, replaced):
   * the agent rests in Error with a message naming the file (see {@link TranscriptLoss}).
   */
  transcript?: TranscriptLoss;
  /**
   * The summary in effect, as the transcript's last `compaction` entry has it: the messages it stands
   * for (and their seqs), or why it was not used (the session restores with pruning).
   */
  compaction?: { messages: number; seqs?: { from: number; through: number } } | { problem: string };
}

/** What the restored machine gets, and what the restore must append to the transcript. */
export interface ReplayPlan {
  snapshot: PersistedAgentSnapshot;
  report: RestoreReport;
  /** `tool_call_finished` entries for calls the restore answered (so a second crash decides nothing twice). */
  append: TranscriptEntryInput[];
  /**
   * Calls of a batch restored as it was (saved in WaitingApproval): what the tool runner does when the
   * restored children ask to run them again. Keyed by tool call id.
   */
  decisions: Map<string, ResumeDecision>;
  /** Approvals to send again after the restore (answered before the stop, not yet in the snapshot). */
  approvals: RecordedApproval[];
}
