import type { Message } from '../llm/message.js';
import { checkPersistedSnapshot } from '../machines/agent-snapshot.js';
import type { ToolCallInfo } from '../machines/emitted-events.js';
import { pendingApprovals } from '../machines/tool-batch.js';
import { expandSnapshot } from '../session/saved-conversation.js';
import { corruptRecordError, type SessionRecord } from '../session/session-store.js';
import type { TranscriptEntry } from '../session/transcript.js';
import { currentEntries } from '../session/transcript-replay.js';

/** A session as a client sees it: read from the store, whichever worker carries it. */
export interface SessionView {
  id: string;
  /** The state at the last save (`AwaitingInput`, `WaitingApproval`, `Completed`, ...). */
  state: string;
  messages: Message[];
  /** Calls waiting for an answer (`client.approve` / `client.reject`). */
  pendingApprovals: ToolCallInfo[];
  /** How the last turn ended. */
  lastResult: { response: string; terminateReason: string | null; error: string | null };
  /** Inputs posted and not applied yet. */
  inbox: number;
  updatedAt: string;
}

/**
 * The view of a saved record, its conversation from the session's transcript `entries` when the record
 * refers to it (throws `corrupt` naming the field when its snapshot does not fit the machine).
 */
export function sessionView(
  record: SessionRecord,
  inbox: number,
  entries: readonly TranscriptEntry[],
  file?: string,
): SessionView {
  const checked = checkPersistedSnapshot(expandSnapshot(record.snapshot, currentEntries(entries)).snapshot);
  if (!checked.ok) throw corruptRecordError(record.id, file, `${checked.field}: ${checked.problem}`);
  const context = checked.snapshot.context;
  return {
    id: record.id,
    state: record.state,
    messages: context.messages,
    pendingApprovals: pendingApprovals(context.batch),
    lastResult: {
      response: context.response,
      terminateReason: context.terminateReason,
      error: context.error?.message ?? null,
    },
    inbox,
    updatedAt: record.updatedAt,
  };
}
