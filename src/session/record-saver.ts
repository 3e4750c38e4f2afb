import type { Actor } from 'xstate';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { SessionLease } from './session-lease.js';
import type { PersistenceErrorHandler, SessionOptions } from './session-options.js';
import type { SessionRecord, SessionStore } from './session-store.js';
import type { OrderedTranscriptWriter } from './transcript-writer.js';

type Snapshot = ReturnType<Actor<AgentMachine>['getSnapshot']>;

/** What saving one session's record needs: the store and session, and the transcript it must not run ahead of. */
export interface RecordSaverOptions {
  store: SessionStore;
  id: string;
  agentName: string | undefined;
  info: SessionOptions['sessionInfo'];
  /** The session's transcript writer: what it holds unwritten goes first. */
  writer: OrderedTranscriptWriter;
  /** The lease this agent holds now (stores with ownership). */
  lease: () => SessionLease | undefined;
  onError: PersistenceErrorHandler;
}

/**
 * Saves one session's record (the machine at a rest point). One save at a time; a save asked for
 * meanwhile saves the latest snapshot when it ends. The transcript goes first: entries held for the next
 * append (tool results) and those a failed append left unwritten are written before the record, and when they cannot be, the record is not saved (that
 * failure was reported), so a saved record is never ahead of its transcript.
 */
export class RecordSaver {
  readonly #o: RecordSaverOptions;
  #dirty: { snapshot: Snapshot; persisted: unknown } | undefined;
  #saving: Promise<void> | undefined;
  #lastSaved: Snapshot | undefined;
  /** Why the last save failed, until one succeeds. */
  #failure: unknown;
  /** The record's title (the first user message), once there is one. */
  #title: { title?: string } = {};
  #record: SessionRecord | undefined;

  constructor(options: RecordSaverOptions) {
    this.#o = options;
  }

  /** The last record saved, or loaded (`loaded`). */
  get record(): SessionRecord | undefined {
    return this.#record;
  }

  /** The record the session was loaded from. */
  loaded(record: SessionRecord): void {
    this.#record = record;
  }

  /** Why the last save failed, until one succeeds. */
  get failure(): unknown {
    return this.#failure;
  }

  /** The save running now, if any. */
  get running(): Promise<void> | undefined {
    return this.#saving;
  }

  /** Whether `snapshot` is the one saved last. */
  saved(snapshot: Snapshot): boolean {
    return snapshot === this.#lastSaved;
  }

  /** Saves `snapshot` (`persisted`: what the record holds of it, taken now) once the running save ends. */
  save(snapshot: Snapshot, persisted: unknown): void {
    this.#dirty = { snapshot, persisted };
    if (this.#saving) return;
    this.#saving = this.#saveLoop();
  }

  async #saveLoop(): Promise<void> {
    const { store, id, agentName, info, writer } = this.#o;
    while (this.#dirty) {
      const { snapshot, persisted } = this.#dirty;
      this.#title = this.#title.title === undefined ? titleOf(snapshot) : this.#title;
      this.#dirty = undefined;
      try {
        await writer.drain();
      } catch {
        continue;
      }
      try {
        const saved = await store.save(
          {
            id,
            state: String(snapshot.value),
            snapshot: persisted,
            ...(agentName !== undefined ? { agentName } : {}),
            ...(info?.bundle !== undefined ? { bundle: info.bundle } : {}),
            ...(info?.meta !== undefined ? { meta: info.meta } : {}),
            ...this.#title,
            turns: snapshot.context.turn,
          },
          { lease: this.#o.lease() },
        );
        this.#record = { ...saved, snapshot: persisted }; // as written: no 2nd copy of a short conversation
        this.#lastSaved = snapshot;
        this.#failure = undefined;
      } catch (error) {
        this.#failure = error;
        const file = store.files?.(id).snapshot;
        this.#o.onError(error, `saving session "${id}"${file ? ` to ${file}` : ''}`);
      }
    }
    this.#saving = undefined;
  }
}

function titleOf(snapshot: Snapshot): { title?: string } {
  const first = snapshot.context.messages.find((m) => m.role === 'user');
  if (!first) return {};
  const text = typeof first.content === 'string' ? first.content : JSON.stringify(first.content);
  return { title: text };
}
