import {
  assertValidSessionId,
  compareListEntries,
  monotonicClock,
  recordBodyJson,
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  saveTimes,
  storedEntryJson,
  storedRecordJson,
  summarizeSession,
  type TranscriptRead,
  transcriptEntryJson,
} from './session-store.js';
import type { TranscriptEntry, TranscriptEntryInput } from './transcript.js';

/** Options of {@link MemorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** Clock for `createdAt`, `updatedAt` and transcript `at`; defaults to the system clock. */
  now?: () => Date;
}

/**
 * A session store that keeps everything in this process, for tests and embedders that do not want
 * files. Values are kept as JSON text, so they come back exactly as from the file store (copies,
 * `undefined` fields dropped) and callers can never change stored data through a reference.
 */
export class MemorySessionStore implements SessionStore {
  private readonly records = new Map<string, string>();
  private readonly transcripts = new Map<string, string[]>();
  private readonly now: () => Date;
  private readonly saveClock: () => Date;

  constructor(options: MemorySessionStoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.saveClock = monotonicClock(this.now);
  }

  async save(input: SessionRecordInput): Promise<SessionRecord> {
    const body = recordBodyJson(input);
    const previousJson = this.records.get(input.id);
    const previous = previousJson === undefined ? undefined : (JSON.parse(previousJson) as SessionRecord);
    const times = saveTimes(input, previous, this.saveClock());
    const transcriptSeq = this.transcripts.get(input.id)?.length ?? 0;
    const json = storedRecordJson({ id: input.id, state: input.state, ...times, transcriptSeq }, body);
    this.records.set(input.id, json);
    return JSON.parse(json) as SessionRecord;
  }

  async load(id: string): Promise<SessionRecord | undefined> {
    assertValidSessionId(id);
    const json = this.records.get(id);
    return json === undefined ? undefined : (JSON.parse(json) as SessionRecord);
  }

  async list(): Promise<SessionListEntry[]> {
    const rows = [...this.records.values()].map((json) =>
      summarizeSession(JSON.parse(json) as SessionRecord),
    );
    return rows.sort(compareListEntries);
  }

  async delete(id: string): Promise<boolean> {
    assertValidSessionId(id);
    const hadRecord = this.records.delete(id);
    const hadTranscript = this.transcripts.delete(id);
    return hadRecord || hadTranscript;
  }

  async appendTranscript(id: string, entries: readonly TranscriptEntryInput[]): Promise<void> {
    assertValidSessionId(id);
    const now = this.now();
    // Serialize all first so that a bad entry appends nothing.
    const bodies = entries.map((entry) => transcriptEntryJson(id, entry, now));
    let lines = this.transcripts.get(id);
    if (!lines) {
      lines = [];
      this.transcripts.set(id, lines);
    }
    for (const body of bodies) lines.push(storedEntryJson(lines.length + 1, body));
  }

  async readTranscript(id: string): Promise<TranscriptRead> {
    assertValidSessionId(id);
    const lines = this.transcripts.get(id) ?? [];
    return { entries: lines.map((line) => JSON.parse(line) as TranscriptEntry) };
  }
}
