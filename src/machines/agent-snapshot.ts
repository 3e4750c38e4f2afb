import type { AnyActor } from 'xstate';
import type { z } from 'zod';
import type { Message } from '../llm/message.js';
import type { ToolCallRequest, ToolResult } from '../tools/tool-call.js';
import type { Plan } from '../tools/update-plan-tool.js';
import { type AgentContext, endedTurnFields, initialContext, newTurnFields } from './agent-context.js';
import { agentContextSchema, persistedSnapshotEnvelope } from './agent-context-schema.js';
import type { ToolBatch } from './tool-batch.js';

// The persisted snapshot as a restore sees it: what code outside the machine may read and build.
// Everything that writes a context or XState's `value`/`children` for a restore goes through here.

/** The parts of `actor.getPersistedSnapshot()` a restore reads and rewrites. */
export interface PersistedAgentSnapshot {
  status: string;
  value: unknown;
  context: AgentContext;
  children?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What {@link checkPersistedSnapshot} found: the snapshot ready to restore, or the first field that is wrong. */
export type SnapshotCheck =
  | { ok: true; snapshot: PersistedAgentSnapshot }
  | {
      ok: false;
      /** Where, as a path from the saved snapshot, e.g. `snapshot.context.messages`. */
      field: string;
      /** What is wrong there. */
      problem: string;
    };

/**
 * Checks a saved snapshot (`record.snapshot` as loaded) against what the machine needs, upgrading a
 * 0.1 snapshot first: a state this version knows (a later version may rename one), a context with
 * every field in its type (agent-context-schema.ts), a conversation the API accepts, children that
 * are persisted actors. Never throws: a snapshot that is not an object at all is a problem too.
 */
export function checkPersistedSnapshot(saved: unknown): SnapshotCheck {
  const envelope = persistedSnapshotEnvelope.safeParse(saved);
  if (!envelope.success) return firstIssue(envelope.error, saved, ['snapshot']);
  const upgraded = upgradeSnapshot(saved as PersistedAgentSnapshot);
  const context = agentContextSchema.safeParse(upgraded.context);
  if (!context.success) return firstIssue(context.error, upgraded.context, ['snapshot', 'context']);
  return { ok: true, snapshot: upgraded };
}

function firstIssue(error: z.ZodError, root: unknown, prefix: readonly PropertyKey[]): SnapshotCheck {
  const issue = error.issues[0]!;
  let found: unknown = root;
  for (const key of issue.path) {
    found =
      typeof found === 'object' && found !== null ? (found as Record<PropertyKey, unknown>)[key] : undefined;
  }
  const shown = JSON.stringify(found)?.slice(0, 60);
  const what =
    issue.code === 'invalid_value'
      ? `found ${shown}, expected one of ${issue.values.map((v) => JSON.stringify(v)).join('|')}`
      : issue.message;
  const more = error.issues.length > 1 ? `; ${error.issues.length - 1} more` : '';
  return { ok: false, field: [...prefix, ...issue.path].map(String).join('.'), problem: `${what}${more}` };
}

/**
 * A persisted snapshot brought to the current context shape. Sessions saved by agentloop 0.1 kept the
 * batch in five flat fields (`calls`, `results`, `pending`, `started`, runner ids naming their calls)
 * and no `alwaysAllowed`; they are moved into `batch`. Fields the current context has and the saved
 * one lacks get their initial values, so a field added later never restores as `undefined`.
 */
export function upgradeSnapshot(persisted: PersistedAgentSnapshot): PersistedAgentSnapshot {
  const saved = withoutFinishedRunners(persisted);
  const old = saved.context as AgentContext & Partial<LegacyBatchFields>;
  const current =
    old.batch !== undefined &&
    old.alwaysAllowed !== undefined &&
    old.plan !== undefined &&
    old.compaction !== undefined;
  if (current && old.limits?.maxCostUsd !== undefined) return saved;
  const { calls, results, pending, started, runners, ...rest } = old;
  const batch: ToolBatch = old.batch ?? {
    calls: calls ?? [],
    results: results ?? {},
    pending: pending ?? [],
    started: started ?? [],
    runners: Object.fromEntries(
      (Array.isArray(runners) ? runners : Object.keys(saved.children ?? {}))
        .filter((id) => id.startsWith('tools:'))
        .map((id) => [id, id.slice('tools:'.length).split(',')]),
    ),
  };
  const defaults = initialContext({ sessionId: old.sessionId, limits: old.limits });
  // Limits a later version added (the cost budgets) get their defaults.
  const limits = defaults.limits;
  return {
    ...saved,
    context: { ...defaults, ...rest, limits, batch, alwaysAllowed: old.alwaysAllowed ?? [] },
  };
}

/**
 * The snapshot without tool runners that had finished: agentloop 0.1 left them among the children, so
 * every saved snapshot carried every runner of the session, results included.
 */
function withoutFinishedRunners(saved: PersistedAgentSnapshot): PersistedAgentSnapshot {
  const children = saved.children;
  if (!children) return saved;
  const finished = Object.keys(children).filter((id) => {
    const status = (children[id] as { snapshot?: { status?: unknown } } | undefined)?.snapshot?.status;
    return id.startsWith('tools:') && (status === 'done' || status === 'error');
  });
  if (finished.length === 0) return saved;
  const kept = { ...children };
  for (const id of finished) delete kept[id];
  return { ...saved, children: kept };
}

/** The batch fields of a 0.1 context. */
interface LegacyBatchFields {
  calls: ToolCallRequest[];
  results: Record<string, ToolResult>;
  pending: string[];
  started: string[];
  runners: string[];
}

/** What a restore found in the transcript past the last save. */
export interface TranscriptTail {
  /** The whole conversation as the transcript holds it (the saved messages first). */
  messages: Message[];
  /** User messages among the replayed ones: a new turn began after the save. */
  newTurns: number;
  /** Model calls made in the turn the conversation ends in. */
  iteration: number;
  /** Tools the user allowed for the session, as recorded. */
  alwaysAllowed: readonly string[];
  /**
   * Set when the conversation ends in the model's final answer (no tool calls): the turn had finished
   * when the process died, so it rests in Completed with this response (resuming would ask again).
   */
  finalResponse?: string;
  /** The plan the replayed `update_plan` calls set, when they set one. */
  plan?: Plan;
}

/**
 * The snapshot of a session whose transcript went past its last save (a crash between rest points):
 * resting in Interrupted, as after Ctrl+C, with the conversation rebuilt from the transcript and no
 * batch or child actor left (nothing runs during a restore). Built from the saved context with the
 * same field sets a turn starts and ends with, so no field is left behind. With `error`, it rests in
 * Error with that error instead (recoverable: the session is initialized, so a message or RESUME goes on).
 */
export function interruptedSnapshot(
  saved: PersistedAgentSnapshot,
  tail: TranscriptTail,
  error?: { message: string; code: string },
): PersistedAgentSnapshot {
  const final = error ? undefined : tail.finalResponse;
  const state = error ? 'Error' : final !== undefined ? 'Completed' : 'Interrupted';
  const context = saved.context;
  const alwaysAllowed = [...new Set([...context.alwaysAllowed, ...tail.alwaysAllowed])];
  const turnStart = tail.newTurns > 0 ? newTurnFields(context, context.turn + tail.newTurns, 0) : {};
  const rebuilt: AgentContext = {
    ...context,
    ...turnStart,
    messages: tail.messages,
    turn: context.turn + tail.newTurns,
    iteration: tail.iteration,
    deadline: null,
    response: final ?? '',
    error: error ?? null,
    ...endedTurnFields(error ? 'error' : final !== undefined ? 'completed' : 'interrupted'),
    alwaysAllowed,
    plan: tail.plan ?? context.plan,
    lastState: state,
  };
  return { ...saved, value: state, context: rebuilt, children: {} };
}

/**
 * The snapshot of the same agent (`saved`: its limits, XState's envelope) at the start of session
 * `sessionId`: initialized, resting in AwaitingInput before its first turn, no message yet, having used
 * `totalUsage`. What a fork is rebuilt from: `planRestore` then replays its whole conversation from
 * its transcript, as after a crash.
 */
export function sessionStartSnapshot(
  saved: PersistedAgentSnapshot,
  start: { sessionId: string; totalUsage: AgentContext['totalUsage'] },
): PersistedAgentSnapshot {
  const fresh = initialContext({ sessionId: start.sessionId, limits: saved.context.limits });
  const context: AgentContext = {
    ...fresh,
    totalUsage: start.totalUsage,
    initialized: true,
    lastState: 'AwaitingInput',
  };
  return { ...saved, value: 'AwaitingInput', context, children: {} };
}

/** A saved snapshot with the tools the transcript says the user allowed added (approvals after the save). */
export function withAlwaysAllowed(
  saved: PersistedAgentSnapshot,
  tools: readonly string[],
): PersistedAgentSnapshot {
  const missing = tools.filter((t) => !saved.context.alwaysAllowed.includes(t));
  if (missing.length === 0) return saved;
  return {
    ...saved,
    context: { ...saved.context, alwaysAllowed: [...saved.context.alwaysAllowed, ...missing] },
  };
}

/**
 * The persisted snapshot of a running agent with an empty conversation (`context.messages: []`),
 * made without visiting the messages: XState's `getPersistedSnapshot` walks the whole context
 * looking for actor references, so at every rest point it visited every message of the session.
 * What a save writes besides the transcript (which holds the conversation).
 */
export function persistedSnapshotWithoutMessages(actor: AnyActor): PersistedAgentSnapshot {
  const snapshot = actor.getSnapshot() as { context: AgentContext };
  const emptied = { ...snapshot, context: { ...snapshot.context, messages: [] } };
  return actor.logic.getPersistedSnapshot(emptied as never) as PersistedAgentSnapshot;
}
