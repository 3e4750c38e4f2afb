import type { Actor } from 'xstate';
import { DEFAULTS } from '../defaults.js';
import type { Message } from '../llm/message.js';
import type { ToolRunHooks } from '../machines/actors/run-tools.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import { persistedSnapshotWithoutMessages } from '../machines/agent-snapshot.js';
import { isRestState } from '../machines/agent-states.js';
import type { AgentEvent } from '../machines/emitted-events.js';
import type { CompactionRecord } from '../prompt/compaction.js';
import { compactionEntry, isNewCompaction } from './compaction-entry.js';
import { FileSessionStore } from './file-store/file-session-store.js';
import type { IdempotentRerun } from './idempotent-rerun.js';
import { LeaseKeeper } from './lease-keeper.js';
import { ledgerHooks } from './ledger-hooks.js';
import { ModelCallEntries } from './model-call-entry.js';
import { RecordSaver } from './record-saver.js';
import type { RecordedApproval, RestoreReport } from './restore-plan.js';
import { compactSnapshot } from './saved-conversation.js';
import { releasedHere, type SessionLease } from './session-lease.js';
import type { PersistenceErrorHandler, SessionOptions } from './session-options.js';
import { loadSession } from './session-restore.js';
import {
  assertValidSessionId,
  createSessionId,
  type SessionRecord,
  type SessionStore,
} from './session-store.js';
import type { ResumeDecision, TranscriptEntryInput } from './transcript.js';
import {
  ALWAYS_ALLOW_EVENT,
  APPROVAL_EVENT,
  type PersistedAgentSnapshot,
  RESTORED_EVENT,
  SESSION_STARTED_EVENT,
} from './transcript-replay.js';
import { OrderedTranscriptWriter, onlyToolResults } from './transcript-writer.js';

export type { PersistenceErrorHandler, SessionOptions };

type Snapshot = ReturnType<Actor<AgentMachine>['getSnapshot']>;

/**
 * Keeps one agent's session in a store: saves the machine at every rest point, appends every message,
 * tool call and approval to the transcript, and restores a saved session (see docs/persistence.md).
 * The Agent facade owns one when `createAgent` gets `store` or `session`.
 */
export class SessionPersistence {
  readonly store: SessionStore;
  readonly id: string;
  /** Set after `open` when the session existed. */
  report: RestoreReport | undefined;
  readonly #info: SessionOptions['sessionInfo'];
  readonly #agentName: string | undefined;
  readonly #isIdempotent: (name: string) => boolean;
  readonly #redact: <T>(value: T) => T;
  #decisions = new Map<string, ResumeDecision>();
  #approvals: RecordedApproval[] = [];
  /** Messages of the conversation already in the transcript. */
  #recordedMessages = 0;
  /** The summary in effect that the transcript has (a restored one is there already). */
  #recordedCompaction: CompactionRecord | null | undefined;
  #actor: Actor<AgentMachine> | undefined;
  /** Messages the transcript holds redacted, by position, as they were: saved with the record. */
  #exact = new Map<number, Message>();
  readonly #preloaded: SessionOptions['sessionRecord'];
  readonly #onLoaded: SessionOptions['onSessionLoaded'];
  /** Settles when every write issued so far has. */
  #writes: Promise<unknown> = Promise.resolve();
  /** Transcript entries in order; what a failed append did not write goes first next time. */
  readonly #writer: OrderedTranscriptWriter;
  /** Saves the record at rest points, never ahead of the transcript. */
  readonly #saver: RecordSaver;
  /** The session's lease while this agent holds it (stores with ownership). */
  readonly #leases: LeaseKeeper;
  readonly #rerun: IdempotentRerun | undefined;
  /** The inbox item the next user message comes from. */
  #inboxTag: number | undefined;
  readonly #modelCalls = new ModelCallEntries();

  constructor(
    options: SessionOptions & { agentName?: string | undefined },
    isIdempotent: (name: string) => boolean,
    onError: PersistenceErrorHandler,
    redact: <T>(value: T) => T = (value) => value,
    rerun?: IdempotentRerun,
  ) {
    this.#rerun = rerun;
    this.#preloaded = options.sessionRecord;
    this.#onLoaded = options.onSessionLoaded;
    this.store = options.store ?? new FileSessionStore();
    this.id = options.session ?? createSessionId();
    assertValidSessionId(this.id);
    this.#info = options.sessionInfo;
    this.#agentName = options.agentName;
    this.#isIdempotent = isIdempotent;
    this.#redact = redact;
    this.#leases = new LeaseKeeper(
      this.store,
      this.id,
      options.leaseMs ?? DEFAULTS.leaseMs,
      options.lease,
      (error) => onError(error, `renewing the lease of session "${this.id}"`),
    );
    this.#writer = new OrderedTranscriptWriter(
      (entries) => this.store.appendTranscript(this.id, entries, { lease: this.#leases.lease }),
      (error, count) =>
        onError(error, `appending ${count} entr${count === 1 ? 'y' : 'ies'} to ${this.#where('transcript')}`),
    );
    this.#saver = new RecordSaver({
      store: this.store,
      id: this.id,
      agentName: this.#agentName,
      info: this.#info,
      writer: this.#writer,
      lease: () => this.#leases.lease,
      onError,
    });
  }

  /** The session's file of that kind, for messages (the session, for stores without files). */
  #where(kind: 'snapshot' | 'transcript'): string {
    return this.store.files?.(this.id)[kind] ?? `the ${kind} of session "${this.id}"`;
  }

  /** The last record saved or loaded. */
  get record(): SessionRecord | undefined {
    return this.#saver.record;
  }

  /**
   * Loads the session: the snapshot to restore (planned against the transcript), or undefined for a
   * new session. Throws the store's error (naming the file) when the session cannot be read, and a
   * `corrupt` one naming the file and the field when its snapshot does not fit the machine.
   */
  async open(): Promise<PersistedAgentSnapshot | undefined> {
    await this.#leases.take();
    try {
      return await this.#load();
    } catch (error) {
      this.close();
      throw this.#redact(error); // a store's error may quote a secret (a connection string's password)
    }
  }

  /** The lease this agent holds, if the store hands them out. */
  get lease(): SessionLease | undefined {
    return this.#leases.lease;
  }

  /** Lets the session go: stops renewing the lease and releases it once the writes so far have settled. */
  close(): void {
    this.#leases.close(this.flush());
  }

  /** Resolves once the lease released by {@link close} is (nothing to wait for before). */
  released(): Promise<void> {
    return releasedHere(this.id);
  }

  async #load(): Promise<PersistedAgentSnapshot | undefined> {
    const loaded = await loadSession({
      store: this.store,
      id: this.id,
      isIdempotent: this.#isIdempotent,
      rerun: this.#rerun,
      append: (entries) => this.#append(entries),
      ...(this.#preloaded !== undefined ? { record: this.#preloaded } : {}),
    });
    if (!loaded) {
      this.#background(
        this.#append([{ kind: 'event', event: SESSION_STARTED_EVENT, data: { agentName: this.#agentName } }]),
      );
      return undefined;
    }
    const { record, plan, entries } = loaded;
    this.#saver.loaded(record);
    this.#exact = loaded.exact;
    this.#recordedMessages = entries.filter((e) => e.kind === 'message').length;
    this.#recordedCompaction = plan.snapshot.context.compaction;
    this.#decisions = plan.decisions;
    this.#approvals = plan.approvals;
    this.report = plan.report;
    this.#onLoaded?.(entries);
    await this.#append([...plan.append, { kind: 'event', event: RESTORED_EVENT, data: plan.report }]);
    return plan.snapshot;
  }

  /** Starts following the actor (call before `actor.start()`); saves the restored state when it was rebuilt. */
  attach(actor: Actor<AgentMachine>): void {
    this.#actor = actor;
    actor.subscribe({ next: (snapshot) => this.#onSnapshot(snapshot), error: () => {} });
    actor.on('*', (event) => this.#onEvent(event as AgentEvent));
  }

  /** Called once the restored actor runs: syncs the rebuilt conversation and replays recorded approvals. */
  afterStart(): RecordedApproval[] {
    const snapshot = this.#actor!.getSnapshot();
    const report = this.report;
    if (report && (report.state !== report.savedState || report.transcript)) this.#onSnapshot(snapshot);
    else this.#appendNewMessages(snapshot);
    const approvals = this.#approvals;
    this.#approvals = [];
    return approvals;
  }

  /**
   * The tool hooks that keep the ledger: start before the run, result after it. `inner` hooks (the caller's) run after ours: their `beforeRun` only when the ledger lets the call run.
   */
  hooks(inner?: ToolRunHooks): ToolRunHooks {
    return ledgerHooks(
      {
        takeDecision: (id) => {
          const decision = this.#decisions.get(id);
          this.#decisions.delete(id);
          return decision;
        },
        append: (entries, options) => this.#track(this.#append(entries, options)),
      },
      inner,
    );
  }

  /**
   * Records an approval answer (before it is sent to the machine) so a restore can replay it. With
   * `alwaysTool`, the user allowed that tool for the rest of the session.
   */
  recordApproval(answer: RecordedApproval, alwaysTool?: string): void {
    const entries: TranscriptEntryInput[] = [{ kind: 'event', event: APPROVAL_EVENT, data: answer }];
    if (alwaysTool) entries.push({ kind: 'event', event: ALWAYS_ALLOW_EVENT, data: { tool: alwaysTool } });
    this.#background(this.#append(entries));
  }

  /** Appends an event entry (in the background, in order with the other writes). */
  recordEvent(event: string, data: unknown): void {
    this.#background(this.#append([{ kind: 'event', event, data }]));
  }

  /**
   * Saves now if the agent rests; resolves with the record once it and every earlier write are
   * durable. Rejects with the store's error when the session could not be written (an append whose
   * entries still wait, or the last save), after reporting it as every failed write is reported.
   */
  async save(): Promise<SessionRecord | undefined> {
    const actor = this.#actor;
    if (actor) {
      const snapshot = actor.getSnapshot();
      if (isRestState(snapshot.value) && snapshot.context.initialized) {
        this.#appendNewMessages(snapshot);
        this.#saver.save(snapshot, this.#persisted(snapshot));
      }
    }
    await this.flush();
    const failure = this.#writer.failure ?? this.#saver.failure;
    if (failure !== undefined) throw failure;
    return this.#saver.record;
  }

  /** Resolves once every save and transcript write issued so far has settled. */
  async flush(): Promise<void> {
    this.#writer.release();
    let seen: Promise<unknown> | undefined;
    while (seen !== this.#writes || this.#saver.running) {
      seen = this.#writes;
      await seen;
      const running = this.#saver.running;
      if (running) await running;
    }
  }

  #onSnapshot(snapshot: Snapshot): void {
    this.#appendNewMessages(snapshot);
    // A new summary in effect gets its `compaction` entry, after the messages it covers.
    const { compaction, turn, iteration } = snapshot.context;
    if (isNewCompaction(compaction, this.#recordedCompaction)) {
      this.#recordedCompaction = compaction;
      this.#background(this.#append([compactionEntry(compaction, turn, iteration)]));
    }
    if (!isRestState(snapshot.value) || !snapshot.context.initialized) return;
    if (this.#saver.saved(snapshot)) return;
    // Taken now: by the time the save runs, the machine may have moved on.
    this.#saver.save(snapshot, this.#persisted(snapshot));
  }

  /**
   * What a save writes of the machine (the actor's current snapshot): its state, and the conversation
   * while it is short; past `DEFAULTS.recordMessagesInline` messages, the number of messages it covers
   * in the transcript (written before the record) instead. Costs the same at any length of the session
   * (docs/persistence.md, "What a save writes").
   */
  #persisted(snapshot: Snapshot): unknown {
    const persisted = persistedSnapshotWithoutMessages(this.#actor!);
    const { messages } = snapshot.context;
    if (messages.length > DEFAULTS.recordMessagesInline)
      return compactSnapshot(persisted, messages.length, this.#exact);
    return { ...persisted, context: { ...persisted.context, messages } };
  }

  #onEvent(event: AgentEvent): void {
    if (event.type === 'model_call') this.#background(this.#append(this.#modelCalls.for(event)));
    else if (event.type === 'turn_end' && event.terminateReason === 'interrupted') {
      this.#background(this.#append([{ kind: 'event', event: 'interrupted', data: { turn: event.turn } }]));
    }
  }

  #appendNewMessages(snapshot: Snapshot): void {
    const messages = snapshot.context.messages;
    if (messages.length <= this.#recordedMessages) return;
    const entries: TranscriptEntryInput[] = [];
    for (let index = this.#recordedMessages; index < messages.length; index++) {
      const message = messages[index]!;
      const inbox = message.role === 'user' ? this.#inboxTag : undefined;
      if (inbox !== undefined) this.#inboxTag = undefined;
      const entry =
        inbox === undefined
          ? { kind: 'message' as const, message }
          : { kind: 'message' as const, message, inbox };
      const written = this.#redact(entry);
      // The transcript gets it redacted; the record keeps it as it was (it is read back from there).
      if (written.message !== message) this.#exact.set(index, message);
      entries.push(written);
    }
    this.#recordedMessages = messages.length;
    this.#background(onlyToolResults(entries) ? this.#writer.hold(entries) : this.#writer.write(entries));
  }

  /**
   * The next user message came from inbox item `seq` (a worker applies it): its transcript line says
   * so, in the same write, so that a new owner after a crash does not apply the item again.
   */
  tagNextUserMessage(seq: number | undefined): void {
    this.#inboxTag = seq;
  }

  /** Appends to the transcript in order, secrets redacted (the snapshot keeps the exact state). */
  #append(entries: TranscriptEntryInput[], options?: { discard?: boolean }): Promise<void> {
    return this.#writer.write(this.#redact(entries), options);
  }

  /** Tracks a write the caller awaits (it rejects on failure); keeps no value (an array per write stayed). */
  #track(promise: Promise<void>): Promise<void> {
    this.#writes = Promise.all([this.#writes, promise.catch(() => {})]).then(() => undefined);
    return promise;
  }

  /** Tracks a write nobody awaits: a failure was reported by the writer and is retried by the next write. */
  #background(promise: Promise<void>): void {
    void this.#track(promise).catch(() => {});
  }
}
