import type { AgentContext } from '../machines/agent-context.js';
import { EMPTY_BATCH, pendingApprovals } from '../machines/tool-batch.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type { BusEvent, PendingApproval, PlanView, SessionStatus } from './protocol.js';
import type { Sanitizer } from './sanitize.js';

/** The part of an XState snapshot the inspector reads. */
export interface SnapshotLike {
  value: unknown;
  status?: string;
  context: Partial<AgentContext> | undefined;
}

const ZERO = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** The top-level state of a state value (`'Thinking'` or `{ Thinking: ... }`). */
export function topState(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.keys(value)[0] ?? '';
  return '';
}

/** A session's status from a machine snapshot (live or persisted), sanitized. */
export function statusOf(snapshot: SnapshotLike, sanitize: Sanitizer): SessionStatus {
  const context = snapshot.context ?? {};
  const pending: PendingApproval[] = pendingApprovals(context.batch ?? EMPTY_BATCH).map((c) => ({
    ...c,
    args: sanitize(c.args),
  }));
  return {
    value: snapshot.value,
    state: topState(snapshot.value),
    status: snapshot.status ?? 'active',
    turn: context.turn ?? 0,
    iteration: context.iteration ?? 0,
    maxIterations: context.maxIterations ?? 0,
    pending,
    turnUsage: context.turnUsage ?? ZERO,
    totalUsage: context.totalUsage ?? ZERO,
    terminateReason: context.terminateReason ?? null,
    error: (sanitize(context.error ?? null) as SessionStatus['error']) ?? null,
    messageCount: context.messages?.length ?? 0,
    plan: (sanitize(context.plan ?? null) as PlanView | null) ?? null,
  };
}

/**
 * Bus-like events from a saved transcript, so the timeline of a saved session reads like a live
 * one: tool calls started and finished, user and assistant messages as turn markers, and the
 * transcript's own event lines under their names.
 */
export function eventsFromTranscript(sessionId: string, entries: readonly TranscriptEntry[]): BusEvent[] {
  const events: BusEvent[] = [];
  let turn = 0;
  let iteration = 0;
  const starts = new Map<string, number>();
  for (const entry of entries) {
    const timestamp = Date.parse(entry.at) || 0;
    const base = { sessionId, turn, iteration, timestamp };
    switch (entry.kind) {
      case 'message': {
        const role = entry.message.role;
        if (role === 'user') {
          turn += 1;
          iteration = 0;
          const content = entry.message.content;
          events.push({
            ...base,
            turn,
            iteration,
            type: 'turn_start',
            input: typeof content === 'string' ? content : '',
          });
        } else if (role === 'assistant') {
          iteration += 1;
          events.push({ ...base, iteration, type: 'iteration', maxIterations: 0 });
        }
        break;
      }
      case 'tool_call_started':
        starts.set(entry.toolCallId, timestamp);
        events.push({
          ...base,
          type: 'tool_call_start',
          toolCallId: entry.toolCallId,
          name: entry.name,
          args: entry.args,
        });
        break;
      case 'tool_call_finished': {
        const end: BusEvent = {
          ...base,
          type: 'tool_call_end',
          toolCallId: entry.toolCallId,
          name: entry.name,
          durationMs: entry.durationMs,
        };
        if (entry.isError) end.error = entry.result;
        else end.result = entry.result;
        events.push(end);
        break;
      }
      case 'event': {
        const data =
          entry.data && typeof entry.data === 'object'
            ? (entry.data as Record<string, unknown>)
            : { data: entry.data };
        events.push({ ...data, ...base, type: entry.event });
        break;
      }
      default:
        break;
    }
  }
  return events;
}
