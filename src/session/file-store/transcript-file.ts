import { constants } from 'node:fs';
import {
  corruptFileError,
  storedEntryJson,
  type TranscriptRead,
  transcriptEntryJson,
} from '../session-store.js';
import { type TranscriptEntry, transcriptEntryProblem } from '../transcript.js';
import { AppendFile } from './append-file.js';
import { openNoFollow } from './no-follow.js';
import { readIfExists } from './read-if-exists.js';

/** The append-only transcript in a session's folder, one JSON entry a line. */
export const TRANSCRIPT_FILE = 'transcript.jsonl';

/** A last line that does not parse and has no newline: a crash cut it off. */
interface TornLine {
  /** Byte offset where the line starts. */
  offset: number;
  /** 1-based line number. */
  line: number;
  bytes: number;
  /** The first 200 characters, for the repair event. */
  fragment: string;
}

interface ParsedTranscript {
  entries: TranscriptEntry[];
  torn?: TornLine;
  /** The last line parses but its newline was not written. */
  missingNewline: boolean;
}

/**
 * Reads JSONL. Only the last line may be broken, and only when it lacks its newline (every append
 * writes whole lines ending in one, so only a crash mid-write leaves that); anything else is corrupt.
 */
function parseTranscript(buffer: Buffer, file: string, id: string): ParsedTranscript {
  const entries: TranscriptEntry[] = [];
  let start = 0;
  let line = 0;
  while (start < buffer.length) {
    const newline = buffer.indexOf(0x0a, start);
    const end = newline === -1 ? buffer.length : newline;
    line++;
    const text = buffer.toString('utf8', start, end);
    if (text.trim() !== '') {
      let problem: string | undefined;
      let value: unknown;
      try {
        value = JSON.parse(text);
        problem = transcriptEntryProblem(value);
      } catch (error) {
        problem = `not valid JSON: ${(error as Error).message}`;
      }
      if (problem === undefined) {
        entries.push(value as TranscriptEntry);
      } else if (newline === -1) {
        const torn = { offset: start, line, bytes: end - start, fragment: text.slice(0, 200) };
        return { entries, torn, missingNewline: false };
      } else {
        throw corruptFileError(id, file, problem, line);
      }
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return { entries, missingNewline: buffer.length > 0 && buffer[buffer.length - 1] !== 0x0a };
}

/** The entries of session `id`'s transcript `file` (none when it does not exist), a torn last line skipped and reported. */
export async function readTranscriptFile(file: string, id: string): Promise<TranscriptRead> {
  const buffer = await readIfExists(file);
  if (buffer === undefined) return { entries: [] };
  const parsed = parseTranscript(buffer, file, id);
  if (!parsed.torn) return { entries: parsed.entries };
  return { entries: parsed.entries, torn: { file, line: parsed.torn.line, bytes: parsed.torn.bytes } };
}

/** What the last read found wrong at the end of the transcript; fixed before the next append. */
type TailFix = { kind: 'newline' } | ({ kind: 'drop' } & TornLine);

/** How a {@link TranscriptAppender} writes. */
export interface TranscriptAppenderOptions {
  /** fdatasync each append (and the folder after creating the file) before it resolves. */
  fsync: boolean;
  /** Clock for the `at` of a `transcript_repaired` entry. */
  now: () => Date;
}

/**
 * Appends numbered lines to one session's transcript file. It reads the file once to learn the last
 * `seq` and how the file ends, then repairs a torn last line (dropping it and recording a
 * `transcript_repaired` event) or a missing newline before its first append. Calls must not overlap:
 * the store queues them.
 */
export class TranscriptAppender {
  /** The transcript file. */
  readonly file: string;
  readonly #id: string;
  readonly #options: TranscriptAppenderOptions;
  /** `seq` of the last entry; undefined until the file has been read here. */
  #lastSeq: number | undefined;
  #tailFix: TailFix | undefined;
  /** The file, kept open between appends. */
  readonly #out: AppendFile;

  /** Appends to `file`, the transcript of session `id`. */
  constructor(file: string, id: string, options: TranscriptAppenderOptions) {
    this.file = file;
    this.#id = id;
    this.#options = options;
    this.#out = new AppendFile(file, options.fsync);
  }

  /** `seq` of the last entry in the file (0 when there is none). */
  async lastSeq(): Promise<number> {
    await this.#readState();
    return this.#lastSeq ?? 0;
  }

  /** Closes the file until the next append (what is known of it is kept). */
  close(): void {
    this.#out.close();
  }

  /** Writes `bodies` (from `transcriptEntryJson`) as the next lines, numbered in order, in one write. */
  async append(bodies: readonly string[]): Promise<void> {
    const file = this.file;
    const id = this.#id;
    try {
      await this.#readState();
      let seq = this.#lastSeq ?? 0;
      let text = '';
      const fix = this.#tailFix;
      if (fix?.kind === 'newline') text += '\n';
      if (fix?.kind === 'drop') {
        // The torn line never completed, so no caller was told it was written: drop it, and say so.
        await truncateNoFollow(file, fix.offset);
        const repaired = transcriptEntryJson(
          id,
          {
            kind: 'event',
            event: 'transcript_repaired',
            data: { droppedLine: fix.line, droppedBytes: fix.bytes, fragment: fix.fragment },
          },
          this.#options.now(),
        );
        text += `${storedEntryJson(++seq, repaired)}\n`;
      }
      this.#tailFix = undefined;
      for (const body of bodies) text += `${storedEntryJson(++seq, body)}\n`;
      await this.#out.append(text);
      this.#lastSeq = seq;
    } catch (error) {
      // The file may now end in a partial line: read it again before the next write.
      this.#lastSeq = undefined;
      this.#tailFix = undefined;
      throw error;
    }
  }

  /** Learns the last `seq` and the state of the file's end, once, and again when the file was replaced. */
  async #readState(): Promise<void> {
    if (this.#out.replaced()) this.#lastSeq = undefined;
    if (this.#lastSeq !== undefined) return;
    const buffer = await readIfExists(this.file);
    if (buffer === undefined) {
      this.#lastSeq = 0;
      this.#tailFix = undefined;
      return;
    }
    const parsed = parseTranscript(buffer, this.file, this.#id);
    let lastSeq = 0;
    for (const entry of parsed.entries) lastSeq = Math.max(lastSeq, entry.seq);
    this.#lastSeq = lastSeq;
    this.#tailFix = parsed.torn
      ? { kind: 'drop', ...parsed.torn }
      : parsed.missingNewline
        ? { kind: 'newline' }
        : undefined;
  }
}

/** Cuts `file` to `size` bytes, never through a symbolic link (refused naming the file). */
async function truncateNoFollow(file: string, size: number): Promise<void> {
  const handle = await openNoFollow(file, constants.O_WRONLY);
  try {
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
}
