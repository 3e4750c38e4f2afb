import { createRedactor, type Redactor } from '../events/redact.js';
import type { Message, Usage } from '../llm/message.js';
import { checkPersistedSnapshot, sessionStartSnapshot } from '../machines/agent-snapshot.js';
import { addUsage, UNREPORTED_USAGE } from '../machines/turn-messages.js';
import { modelCallOf } from '../session/model-call-entry.js';
import { compactSnapshot, exactMessages, expandSnapshot } from '../session/saved-conversation.js';
import {
  assertValidSessionId,
  createSessionId,
  isCount,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
} from '../session/session-store.js';
import type { TranscriptEntry, TranscriptEntryInput } from '../session/transcript.js';
import { currentEntries, planRestore } from '../session/transcript-replay.js';
import { forkCutProblem } from './fork-point.js';

/** The transcript event a fork writes after the prefix it copied: where it came from and what it changed. */
export const SESSION_FORKED_EVENT = 'session_forked';

/** What {@link forkSession} takes. */
export interface ForkOptions {
  /** The `seq` of the last transcript entry the fork keeps: a rest point (docs/evals.md, "Fork"). */
  at: number;
  /** The model the fork runs on, kept in its record's `meta.model` (`chat --resume` uses it). */
  model?: string;
  /** Replaces the system prompt (the conversation's first message) in the fork. */
  system?: string;
  /** Appended as the fork's next user message: the fork then waits to be resumed (`agent.resume()`). */
  message?: string;
  /** The new session's id (default: a fresh one); refused when a session has it. */
  id?: string;
  /**
   * Redacts `system` and `message` where the fork's transcript holds them; its record keeps them
   * exact, as an agent's save does. Default: the default secret patterns and `OPENAI_API_KEY`
   * (`createRedactor()`); pass the agent's `redactor` when it knows more secrets.
   */
  redactor?: Redactor;
}

/** The `data` of the `session_forked` event. */
export interface SessionForkedData {
  /** The source session. */
  session: string;
  /** The `seq` of the last entry copied. */
  seq: number;
  model?: string;
  /** The system prompt that replaced the conversation's first message in the fork. */
  system?: string;
}

/** The new session. */
export interface ForkResult {
  id: string;
  record: SessionRecord;
}

/** A fork that was refused: the message names the session and why (an unknown one, a bad cut). */
export class ForkError extends Error {
  override name = 'ForkError';
}

/**
 * Copies session `id` up to the rest point `options.at` into a new session of the same store and
 * returns it. The fork's transcript is the source's entries up to and including `at` (the same
 * entries, in order, each with its time), then a `session_forked` event and, with `message`, the
 * next user message; its record is the state the agent was in at the cut, rebuilt from that
 * transcript the way a restore rebuilds one after a crash, so every tool call before the cut keeps
 * its recorded result and none runs again. Nothing of the source is written. Uses only the
 * `SessionStore` interface, so any store works. Throws {@link ForkError} for an unknown session, an
 * `at` that names no entry, or a cut that is not a rest point (naming why).
 */
export async function forkSession(
  store: SessionStore,
  id: string,
  options: ForkOptions,
): Promise<ForkResult> {
  const refuse = (why: string) => new ForkError(`cannot fork session "${id}": ${why}`);
  assertValidSessionId(id);
  const { at } = options;
  if (!Number.isSafeInteger(at) || at < 1) throw refuse(`"at" must be an entry seq (1 or more), got ${at}`);
  for (const key of ['model', 'system', 'message'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === ''))
      throw refuse(`"${key}" must be a non-empty string`);
  }
  const record = await store.load(id);
  if (!record) throw refuse('there is no such session');
  const { entries } = await store.readTranscript(id);
  const problem = forkCutProblem(entries, at);
  if (problem) throw refuse(`not at seq ${at}: ${problem}`);
  const prefix = entries.slice(0, entries.findIndex((e) => e.seq === at) + 1);

  const forkId = options.id ?? createSessionId();
  assertValidSessionId(forkId);
  if ((await store.load(forkId)) || (await store.readTranscript(forkId)).entries.length > 0)
    throw refuse(`session "${forkId}" exists already`);

  const sourceCurrent = currentEntries(entries);
  const expanded = expandSnapshot(record.snapshot, sourceCurrent).snapshot;
  const checked = checkPersistedSnapshot(expanded);
  if (!checked.ok) throw refuse(`its saved snapshot cannot be read (${checked.field}: ${checked.problem})`);

  const current = currentEntries(prefix);
  const system = replacedSystem(current, options.system, refuse);
  const forked: SessionForkedData = {
    session: id,
    seq: at,
    ...(options.model !== undefined ? { model: options.model } : {}),
    ...(options.system !== undefined ? { system: options.system } : {}),
  };
  const next: Message | undefined =
    options.message !== undefined ? { role: 'user', content: options.message } : undefined;
  const appended: TranscriptEntryInput[] = [
    ...prefix.map(copyOf),
    { kind: 'event', event: SESSION_FORKED_EVENT, data: forked, at: new Date().toISOString() },
    ...(next ? [{ kind: 'message' as const, message: next }] : []),
  ];

  // The fork's state at the cut, planned (and checked) before anything is written.
  const start = sessionStartSnapshot(checked.snapshot, {
    sessionId: forkId,
    totalUsage: usageBefore(current),
  });
  const planned = appended.map((entry, i) => ({ at: '', ...entry, seq: i + 1 }) as TranscriptEntry);
  const plan = planRestore(start, currentEntries(planned), () => false);
  const fit = checkPersistedSnapshot(plan.snapshot);
  if (!fit.ok) throw refuse(`its transcript up to seq ${at} does not rebuild (${fit.field}: ${fit.problem})`);
  const { snapshot } = plan;
  const count = snapshot.context.messages.length;
  // The messages the source's record holds as they were (the transcript has them redacted, or a fork
  // replaced its system prompt) stay so in the fork, when the cut is in the source's current session.
  const sameSession = current.length > 0 && current[0]!.seq === sourceCurrent[0]?.seq;
  const exact = new Map(
    [...(sameSession ? exactMessages(record.snapshot, sourceCurrent) : [])].filter(([i]) => i < count),
  );
  if (system) exact.set(0, system);
  const redactor = options.redactor ?? createRedactor();
  if (next && redactor.contains(options.message!)) exact.set(count - 1, next);
  const forkRecord: SessionRecordInput = {
    id: forkId,
    state: String(snapshot.value),
    snapshot: compactSnapshot(snapshot, count, exact),
    ...(record.agentName !== undefined ? { agentName: record.agentName } : {}),
    ...(record.bundle !== undefined ? { bundle: record.bundle } : {}),
    ...(record.title !== undefined ? { title: record.title } : {}),
    turns: snapshot.context.turn,
    meta: {
      ...record.meta,
      forkedFrom: { session: id, seq: at },
      ...(options.model !== undefined ? { model: options.model } : {}),
    },
  };
  // Planned with the exact texts (the record keeps them); written redacted.
  const written = appended.map((entry, i) => (i < prefix.length ? entry : redactor.redactValue(entry)));
  const saved = await writeFork(store, forkId, [...written, ...plan.append], forkRecord, refuse);
  return { id: forkId, record: saved };
}

/**
 * Writes the fork: its transcript, then its record. When a write fails, what was written is removed
 * (the id was free before), so a failed fork leaves no half session and the same `id` can be retried.
 */
async function writeFork(
  store: SessionStore,
  forkId: string,
  entries: TranscriptEntryInput[],
  record: SessionRecordInput,
  refuse: (why: string) => ForkError,
): Promise<SessionRecord> {
  try {
    await store.appendTranscript(forkId, entries);
    return await store.save(record);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const removed = await store.delete(forkId).then(
      () => 'nothing of it was kept',
      (failure: unknown) =>
        `and what was written could not be removed (${failure instanceof Error ? failure.message : String(failure)}): delete session "${forkId}"`,
    );
    throw Object.assign(refuse(`writing session "${forkId}" failed (${why}); ${removed}`), { cause: error });
  }
}

/** With `system`, the conversation's first message (a system prompt, else refused) with that text. */
function replacedSystem(
  entries: readonly TranscriptEntry[],
  system: string | undefined,
  refuse: (why: string) => ForkError,
): Message | undefined {
  if (system === undefined) return undefined;
  const first = entries.find((e) => e.kind === 'message');
  if (first?.kind !== 'message' || first.message.role !== 'system') {
    throw refuse('its conversation does not start with a system prompt to replace');
  }
  return { ...first.message, content: system };
}

/**
 * The tokens (and cost, while every call's is known) the model calls before the cut used, as their
 * `model_call` entries recorded them; a call recorded without usable usage counts as of unknown cost.
 */
function usageBefore(entries: readonly TranscriptEntry[]): Usage {
  let total: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0 };
  for (const entry of entries) {
    const record = modelCallOf(entry);
    if (typeof record !== 'object') continue;
    const usage = record.usage as Partial<Usage> | null;
    const { promptTokens: p, completionTokens: c, totalTokens: t, cachedPromptTokens, costUsd } = usage ?? {};
    const counted =
      isCount(p) && isCount(c) && isCount(t)
        ? {
            promptTokens: p,
            completionTokens: c,
            totalTokens: t,
            ...(isCount(cachedPromptTokens) ? { cachedPromptTokens } : {}),
            ...(isCount(costUsd) ? { costUsd } : {}),
          }
        : UNREPORTED_USAGE;
    total = addUsage(total, counted);
  }
  return total;
}

/** An entry as `appendTranscript` takes it: everything but the `seq` the store assigns. */
function copyOf(entry: TranscriptEntry): TranscriptEntryInput {
  const { seq: _seq, ...rest } = entry;
  return rest as TranscriptEntryInput;
}
