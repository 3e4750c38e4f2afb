import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** Fields the store stamps on every transcript entry. */
interface TranscriptEntryBase {
  /** Position in the session's transcript, counted from 1 and assigned by the store in append order. */
  seq: number;
  /** ISO time the entry was appended (or the time the caller gave). */
  at: string;
}

/** A message added to the conversation (user, assistant, tool, system). */
export interface TranscriptMessageEntry extends TranscriptEntryBase {
  kind: 'message';
  message: ChatCompletionMessageParam;
  /** The inbox item (its `seq`) this user message came from, when a worker applied one. */
  inbox?: number;
}

/** Written before a tool call runs: if no matching `tool_call_finished` follows, the call was cut off. */
export interface ToolCallStartedEntry extends TranscriptEntryBase {
  kind: 'tool_call_started';
  toolCallId: string;
  name: string;
  args: unknown;
  /** The key the tool got (`ToolContext.idempotencyKey`): the same on every run of this call. */
  idempotencyKey?: string;
}

/** Written after a tool call ends (success, failure, timeout, rejection or a reported interruption). */
export interface ToolCallFinishedEntry extends TranscriptEntryBase {
  kind: 'tool_call_finished';
  toolCallId: string;
  name: string;
  /** The text the model was (or will be) given as the `role: 'tool'` message content. */
  result: string;
  isError: boolean;
  durationMs: number;
}

/** Anything else worth an audit line: approvals, interrupts, limit warnings, store repairs. */
export interface TranscriptEventEntry extends TranscriptEntryBase {
  kind: 'event';
  event: string;
  data?: unknown;
}

/** One line of a session's append-only transcript. */
export type TranscriptEntry =
  | TranscriptMessageEntry
  | ToolCallStartedEntry
  | ToolCallFinishedEntry
  | TranscriptEventEntry;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What `appendTranscript` takes: the store assigns `seq`, and `at` when it is missing. */
export type TranscriptEntryInput = DistributiveOmit<TranscriptEntry, 'seq' | 'at'> & { at?: string };

/** What the transcript says about one tool call. */
export type ToolCallStatus =
  | {
      status: 'completed';
      toolCallId: string;
      name: string;
      result: string;
      isError: boolean;
      durationMs: number;
      finishedAt: string;
    }
  | { status: 'started-no-result'; toolCallId: string; name: string; args: unknown; startedAt: string }
  | { status: 'not-started'; toolCallId: string };

/**
 * Reads the tool-call lines of a transcript into one status per `toolCallId`. The first recorded
 * result wins (it is the one the model saw); a start without any result is `started-no-result`.
 * Calls that never appear are absent from the map (`not-started`).
 */
export function toolCallLedger(entries: Iterable<TranscriptEntry>): Map<string, ToolCallStatus> {
  const ledger = new Map<string, ToolCallStatus>();
  for (const entry of entries) {
    if (entry.kind === 'tool_call_started') {
      if (ledger.get(entry.toolCallId)?.status === 'completed') continue;
      ledger.set(entry.toolCallId, {
        status: 'started-no-result',
        toolCallId: entry.toolCallId,
        name: entry.name,
        args: entry.args,
        startedAt: entry.at,
      });
    } else if (entry.kind === 'tool_call_finished') {
      if (ledger.get(entry.toolCallId)?.status === 'completed') continue;
      ledger.set(entry.toolCallId, {
        status: 'completed',
        toolCallId: entry.toolCallId,
        name: entry.name,
        result: entry.result,
        isError: entry.isError,
        durationMs: entry.durationMs,
        finishedAt: entry.at,
      });
    }
  }
  return ledger;
}

/** What to do with one tool call of the assistant message being resumed. */
export type ResumeDecision =
  /** The call finished before the stop: give the model the recorded result, do not run it. */
  | { toolCallId: string; action: 'use-recorded'; name: string; result: string; isError: boolean }
  /**
   * The call started but no result was recorded and the tool is not idempotent: it may or may not
   * have taken effect. Give the model `result` (an error) and append it as a `tool_call_finished`.
   */
  | { toolCallId: string; action: 'report-interrupted'; name: string; result: string; isError: true }
  /** Run the call: it never started, or it started without a result and its tool is idempotent. */
  | { toolCallId: string; action: 'run'; reason: 'not-started' | 'idempotent-rerun' };

/**
 * The "outcome unknown" tool result: what the model gets for a call that was cut off by a stop or a
 * crash before its result was recorded (and that is not run again: only `idempotent` tools are).
 */
export function interruptedToolResult(name: string): string {
  return (
    `Outcome unknown: tool call "${name}" was interrupted: the agent stopped while it ran and no result was recorded. ` +
    'It may or may not have taken effect; check (look the effect up) before calling it again.'
  );
}

/**
 * Decides, for each tool call of the assistant message being resumed (in the given order), whether
 * to reuse its recorded result, report it as interrupted, or run it. Pure: reads only its arguments.
 * `isIdempotent` gets the tool name recorded when the call started.
 */
export function resumeDecisions(
  entries: Iterable<TranscriptEntry>,
  toolCallIds: readonly string[],
  isIdempotent: (toolName: string) => boolean,
): ResumeDecision[] {
  const ledger = toolCallLedger(entries);
  return toolCallIds.map((toolCallId): ResumeDecision => {
    const status = ledger.get(toolCallId);
    if (status === undefined || status.status === 'not-started') {
      return { toolCallId, action: 'run', reason: 'not-started' };
    }
    if (status.status === 'completed') {
      return {
        toolCallId,
        action: 'use-recorded',
        name: status.name,
        result: status.result,
        isError: status.isError,
      };
    }
    if (isIdempotent(status.name)) return { toolCallId, action: 'run', reason: 'idempotent-rerun' };
    return {
      toolCallId,
      action: 'report-interrupted',
      name: status.name,
      result: interruptedToolResult(status.name),
      isError: true,
    };
  });
}

/** The reason a parsed JSON value is not a transcript entry, or undefined when it is one. */
export function transcriptEntryProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const entry = value as Record<string, unknown>;
  if (!Number.isSafeInteger(entry.seq) || (entry.seq as number) < 1) return 'missing or invalid "seq"';
  if (typeof entry.at !== 'string') return 'missing or invalid "at"';
  if (typeof entry.kind !== 'string') return 'missing or invalid "kind"';
  if (
    (entry.kind === 'tool_call_started' || entry.kind === 'tool_call_finished') &&
    typeof entry.toolCallId !== 'string'
  ) {
    return `"${entry.kind}" without a string "toolCallId"`;
  }
  return undefined;
}
