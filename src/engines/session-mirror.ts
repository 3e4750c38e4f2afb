import type { Agent } from '../agent/agent.js';
import type { AgentOptions } from '../agent/agent-options.js';
import { MemorySessionStore } from '../session/memory-session-store.js';
import { assertValidSessionId, type SessionRecord, type SessionStore } from '../session/session-store.js';
import type { TranscriptEntry, TranscriptEntryInput } from '../session/transcript.js';
import { RESTORED_EVENT } from '../session/transcript-replay.js';

/** Runs `run` as a durable step of the engine named `key` (a replay resolves with the record). */
export type MirrorStep = <T>(key: string, run: () => Promise<T>) => Promise<T>;

/** What the turn's first mirror step records: where the store's transcript ended when the turn began. */
interface MirrorBase {
  seq: number;
}

/**
 * A session run by an engine, kept in a `SessionStore` as well, so that `agentloop sessions`, replay
 * and fork read it like any other (docs/engines.md, "Sessions in a store").
 *
 * The agent of a turn runs with the normal persistence path (`createAgent({ store, session })`) over
 * a store in memory, primed with the real store's transcript as it stood when the turn began and a
 * record holding the engine's snapshot (the engine stays the source of truth). What the agent writes
 * there is copied to the real store by durable steps ({@link sync}): at each approval wait and at
 * the end of the turn. Each copy is idempotent under replay: the turn's first step records the
 * transcript's last `seq`, each copy records the `seq` it left, and a copy appends only when the
 * store still ends where the last recorded copy left it (an attempt that appended and died before
 * its step was recorded has written these entries already; the record is saved again either way).
 */
export class SessionMirror {
  readonly #store: SessionStore;
  readonly #capture: MemorySessionStore;
  readonly #id: string;
  /** Where the real transcript ends after the last copy this execution knows of. */
  #expected: number;
  /** The capture's entries up to this `seq` were copied (or belong to a copy recorded earlier). */
  #copied: number;
  #copies = 0;
  /** Where the last copy run by this execution left the transcript (its step may not be settled yet). */
  #ranTo = 0;
  /** Copies issued and not yet recorded. */
  #running = 0;

  private constructor(store: SessionStore, capture: MemorySessionStore, id: string, base: number) {
    this.#store = store;
    this.#capture = capture;
    this.#id = id;
    this.#expected = base;
    this.#copied = base;
  }

  /**
   * Starts a turn's mirror: records (as the step `agentloop.mirror.base`) where the store's transcript
   * ends, and primes the capture with the transcript up to there and the engine's snapshot.
   * `engine` names the engine in errors; `snapshot` is the one the engine holds (none before the
   * first turn). Throws naming the session when the store has a session the engine does not know.
   */
  static async open(options: {
    store: SessionStore;
    sessionId: string;
    engine: string;
    agentName?: string | undefined;
    snapshot: unknown;
    step: MirrorStep;
  }): Promise<SessionMirror> {
    const { store, sessionId: id, engine } = options;
    assertValidSessionId(id);
    const base = await options.step<MirrorBase>('agentloop.mirror.base', async () => ({
      seq: lastSeq((await store.readTranscript(id)).entries),
    }));
    const capture = new MemorySessionStore();
    const record = base.seq > 0 ? await store.load(id).catch(() => undefined) : undefined;
    // A store shared by agents: a session of another agent is never written by this one.
    if (record?.agentName !== undefined && record.agentName !== options.agentName) {
      throw new Error(
        `agentloop/${engine}: session "${id}" in the store belongs to agent "${record.agentName}", not "${options.agentName ?? '(unnamed)'}": send it to that agent, or use another session id`,
      );
    }
    if (base.seq > 0 && options.snapshot === undefined) {
      throw new Error(
        `agentloop/${engine}: session "${id}" has a transcript in the store but no state in ${engine}: use another session id, or delete it from the store`,
      );
    }
    if (options.snapshot !== undefined) {
      const kept = (await store.readTranscript(id)).entries.filter((entry) => entry.seq <= base.seq);
      if (kept.length > 0) await capture.appendTranscript(id, kept.map(input));
      const snapshot = options.snapshot as { value?: unknown; context?: { turn?: number } };
      await capture.save({
        id,
        state: String(snapshot.value ?? 'AwaitingInput'),
        snapshot: options.snapshot,
        ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
        ...(record?.title !== undefined ? { title: record.title } : {}),
        ...(record?.bundle !== undefined ? { bundle: record.bundle } : {}),
        ...(record?.meta !== undefined ? { meta: record.meta } : {}),
        ...(record?.createdAt !== undefined ? { createdAt: record.createdAt } : {}),
        turns: snapshot.context?.turn ?? 0,
      });
    }
    return new SessionMirror(store, capture, id, base.seq);
  }

  /** Whether a copy was issued and is not recorded yet (the next one starts where it ends). */
  get copying(): boolean {
    return this.#running > 0;
  }

  /** What `createAgent` takes so that the agent writes its session through the normal path. */
  agentOptions(): Pick<AgentOptions, 'store' | 'session'> {
    return { store: this.#capture, session: this.#id };
  }

  /**
   * Copies what the agent wrote since the last copy (its transcript entries, then its record) to the
   * store, as the durable step `agentloop.mirror.<n>`. Waits for the agent's writes first.
   */
  async sync(agent: Agent<unknown>, step: MirrorStep): Promise<void> {
    await (await this.prepare(agent))(step);
  }

  /**
   * {@link sync} in two parts, for an engine that must issue the step without awaiting it (Restate's
   * loop waits for every outstanding step at once): waits for the agent's writes and takes what is
   * new, then returns the function that issues the copy's step.
   */
  async prepare(agent: Agent<unknown>): Promise<(step: MirrorStep) => Promise<void>> {
    await agent.flush();
    const from = this.#copied;
    const entries = (await this.#capture.readTranscript(this.#id)).entries;
    this.#copied = lastSeq(entries);
    const fresh = entries.filter((entry) => entry.seq > from && !isRestored(entry)).map(input);
    const record = await this.#capture.load(this.#id);
    return async (step) => {
      const key = `agentloop.mirror.${++this.#copies}`;
      this.#running++;
      try {
        const copied = await step<MirrorBase>(key, () =>
          this.#copy(Math.max(this.#expected, this.#ranTo), fresh, record),
        );
        this.#expected = copied.seq;
      } finally {
        this.#running--;
      }
    };
  }

  async #copy(
    expected: number,
    fresh: TranscriptEntryInput[],
    record: SessionRecord | undefined,
  ): Promise<MirrorBase> {
    const store = this.#store;
    const at = lastSeq((await store.readTranscript(this.#id)).entries);
    if (at < expected) {
      throw new Error(
        `session "${this.#id}": the store's transcript ends at seq ${at}, before ${expected} where this turn's last copy left it`,
      );
    }
    // Past it: an attempt that died after appending and before its step was recorded wrote them.
    if (at === expected && fresh.length > 0) await store.appendTranscript(this.#id, fresh);
    if (record) {
      const { updatedAt: _updated, transcriptSeq: _seq, ...rest } = record;
      await store.save(rest);
    }
    this.#ranTo = at === expected ? at + fresh.length : at;
    return { seq: this.#ranTo };
  }
}

function lastSeq(entries: readonly TranscriptEntry[]): number {
  return entries.at(-1)?.seq ?? 0;
}

/** An entry as `appendTranscript` takes it back (its time kept). */
function input(entry: TranscriptEntry): TranscriptEntryInput {
  const { seq: _seq, ...rest } = entry;
  return rest as TranscriptEntryInput;
}

/** The capture's restore at the start of each turn is the engine's business, not the session's. */
function isRestored(entry: TranscriptEntry): boolean {
  return entry.kind === 'event' && entry.event === RESTORED_EVENT;
}
