import { readFile } from 'node:fs/promises';
import type { AssistantMessage } from '../llm/message.js';
import { COMPACTION_EVENT } from '../session/compaction-entry.js';
import {
  type ModelCallData,
  modelCallOf,
  type RequestSettingsData,
  requestSettingsOf,
} from '../session/model-call-entry.js';
import type { SessionStore } from '../session/session-store.js';
import { type TranscriptEntry, transcriptEntryProblem } from '../session/transcript.js';

/** One model call of a recording: the reply the model gave and, when recorded, how the call went. */
export interface RecordedCall {
  /** The `model_call` entry's data; undefined for a reply without one (a transcript older than it). */
  record: ModelCallData | undefined;
  /** The reply as it joined the conversation. */
  reply: AssistantMessage;
  /** `seq` of the reply's transcript entry. */
  seq: number;
  /**
   * The request settings (model, tools, parameters) in force at this call: the last
   * `request_settings` entry before it; undefined in transcripts written before that entry existed.
   */
  settings: RequestSettingsData | undefined;
}

/**
 * A compaction of a recording: its summary call has no `model_call` entry; the `compaction` entry
 * holds the reply (the summary), which a replay gives the summary call made at the same point.
 */
export interface RecordedCompaction {
  /** The summary the model wrote. */
  summary: string;
  /** Model calls (replies) of the recording before it: it happened before call `afterCalls + 1`. */
  afterCalls: number;
  /** `seq` of the `compaction` entry. */
  seq: number;
}

/** A transcript read for replay: its entries, its model calls and its compactions in order. */
export class Cassette {
  /** Where it came from: the file, or `session "id"`. */
  readonly source: string;
  readonly entries: readonly TranscriptEntry[];
  /** The model calls in order (each assistant message is one reply). */
  readonly calls: readonly RecordedCall[];
  /** The compactions by summary in order (`compaction` entries). */
  readonly compactions: readonly RecordedCompaction[];

  private constructor(
    source: string,
    entries: readonly TranscriptEntry[],
    calls: readonly RecordedCall[],
    compactions: readonly RecordedCompaction[],
  ) {
    this.source = source;
    this.entries = entries;
    this.calls = calls;
    this.compactions = compactions;
  }

  /**
   * Reads a transcript file (JSONL, one entry a line, as `transcript.jsonl` of a file store). Blank
   * lines are passed over; any other line that is not a transcript entry, or a `model_call` entry
   * that is malformed, is an error naming the file and the line.
   */
  static async fromFile(file: string): Promise<Cassette> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CassetteError(`${file}: cannot read the transcript (${(error as Error).message})`);
    }
    const entries: TranscriptEntry[] = [];
    const lines: number[] = [];
    for (const [index, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new CassetteError(`${file} line ${index + 1}: not valid JSON (${(error as Error).message})`);
      }
      const problem = transcriptEntryProblem(value);
      if (problem) throw new CassetteError(`${file} line ${index + 1}: not a transcript entry (${problem})`);
      entries.push(value as TranscriptEntry);
      lines.push(index + 1);
    }
    return Cassette.#of(file, entries, (i) => `${file} line ${lines[i]}`);
  }

  /** Reads session `id`'s transcript from `store`; a session without one is an error naming it. */
  static async fromSession(store: SessionStore, id: string): Promise<Cassette> {
    const { entries } = await store.readTranscript(id);
    const source = `session "${id}"`;
    if (entries.length === 0) throw new CassetteError(`${source}: no transcript (unknown session?)`);
    return Cassette.#of(source, entries, (i) => `${source} transcript entry seq ${entries[i]!.seq}`);
  }

  /**
   * Pairs each assistant message with the `model_call` entry just before it (the order a saved
   * session writes them in). An assistant message without one is a reply with `record` undefined.
   * A `compaction` entry without a summary is an error naming it.
   */
  static #of(source: string, entries: TranscriptEntry[], where: (index: number) => string): Cassette {
    const calls: RecordedCall[] = [];
    const compactions: RecordedCompaction[] = [];
    let pending: ModelCallData | undefined;
    let settings: RequestSettingsData | undefined;
    for (const [index, entry] of entries.entries()) {
      const recorded = requestSettingsOf(entry);
      if (typeof recorded === 'string') throw new CassetteError(`${where(index)}: ${recorded}`);
      if (recorded) {
        settings = recorded;
        continue;
      }
      const record = modelCallOf(entry);
      if (typeof record === 'string') throw new CassetteError(`${where(index)}: ${record}`);
      if (record) {
        pending = record;
        continue;
      }
      if (entry.kind === 'event' && entry.event === COMPACTION_EVENT) {
        const summary = (entry.data as { summary?: unknown } | null)?.summary;
        if (typeof summary !== 'string' || summary.trim() === '') {
          throw new CassetteError(`${where(index)}: a compaction entry without a summary`);
        }
        compactions.push({ summary, afterCalls: calls.length, seq: entry.seq });
        continue;
      }
      if (entry.kind !== 'message') continue;
      const message = entry.message as unknown;
      if (typeof message !== 'object' || message === null) {
        throw new CassetteError(`${where(index)}: a message entry without a message object`);
      }
      if ((message as { role?: unknown }).role !== 'assistant') continue;
      calls.push({ record: pending, reply: message as AssistantMessage, seq: entry.seq, settings });
      pending = undefined;
    }
    return new Cassette(source, entries, calls, compactions);
  }
}

/** A recording that cannot be read: the message names the file (or session) and the line. */
export class CassetteError extends Error {
  override name = 'CassetteError';
}
