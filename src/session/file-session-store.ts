import { randomBytes } from 'node:crypto';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  truncate,
} from 'node:fs/promises';
import path from 'node:path';
import {
  assertValidSessionId,
  compareListEntries,
  monotonicClock,
  prependJsonFields,
  recordBodyJson,
  type SessionListEntry,
  type SessionRecord,
  type SessionRecordInput,
  type SessionStore,
  SessionStoreError,
  saveTimes,
  summarizeSession,
  type TranscriptRead,
  transcriptEntryJson,
  type UnreadableSession,
} from './session-store.js';
import { type TranscriptEntry, type TranscriptEntryInput, transcriptEntryProblem } from './transcript.js';

/** The record file in a session's folder (replaced atomically by each save). */
export const SNAPSHOT_FILE = 'snapshot.json';
/** The append-only transcript in a session's folder, one JSON entry a line. */
export const TRANSCRIPT_FILE = 'transcript.jsonl';
/** Version of the `snapshot.json` layout; a newer one is refused rather than misread. */
export const SNAPSHOT_FORMAT_VERSION = 1;

/** Where sessions go and how hard writes are pushed to disk. */
export interface FileSessionStoreOptions {
  /** The sessions folder itself; wins over `AGENTLOOP_HOME` and `projectRoot`. */
  dir?: string;
  /** Sessions go to `<projectRoot>/.agentloop/sessions` unless `AGENTLOOP_HOME` is set. Defaults to the cwd. */
  projectRoot?: string;
  /** Where `AGENTLOOP_HOME` is read; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * fsync each write (and the folder after a rename or a new file) before it resolves, so that a
   * power loss cannot lose a recorded tool call. Default true; false only for throwaway sessions.
   */
  fsync?: boolean;
  /** Clock for `createdAt`, `updatedAt` and transcript `at`; defaults to the system clock. */
  now?: () => Date;
}

/** The sessions folder the options select: `dir`, else `$AGENTLOOP_HOME/sessions`, else `<projectRoot>/.agentloop/sessions`. */
export function resolveSessionsDir(
  options: Pick<FileSessionStoreOptions, 'dir' | 'projectRoot' | 'env'> = {},
): string {
  if (options.dir) return path.resolve(options.dir);
  const home = (options.env ?? process.env).AGENTLOOP_HOME;
  if (home) return path.resolve(home, 'sessions');
  return path.resolve(options.projectRoot ?? process.cwd(), '.agentloop', 'sessions');
}

/** What the last read found wrong at the end of the transcript; fixed before the next append. */
type TailFix =
  | { kind: 'newline' }
  | { kind: 'drop'; offset: number; line: number; bytes: number; fragment: string };

/** Appends that arrived while earlier work for the session was running; written by one write. */
interface AppendBatch {
  bodies: string[];
  done: Promise<void>;
}

/** Per-session state of this store: the write queue and what it knows about the files. */
interface Lane {
  /** Settles when the last queued write for the session has. */
  tail: Promise<unknown>;
  batch: AppendBatch | undefined;
  /** `seq` of the last transcript entry; undefined until the transcript has been read here. */
  lastSeq: number | undefined;
  transcriptIsNew: boolean;
  tailFix: TailFix | undefined;
  /** Times of the saved record, once known. */
  saved: { createdAt: string; updatedAt: string } | undefined;
  /** Whether leftover temp files of crashed saves have been removed. */
  swept: boolean;
}

const LIST_CONCURRENCY = 16;
const noop = () => {};

/**
 * The default session store: one folder per session under {@link resolveSessionsDir}, holding
 * `snapshot.json` (replaced atomically: temp file, fsync, rename) and `transcript.jsonl`
 * (append-only). Writes for one session are queued in call order; appends that pile up while a
 * write runs go out together in one write. One process writes a given session at a time.
 */
export class FileSessionStore implements SessionStore {
  /** The sessions folder. */
  readonly dir: string;
  private readonly fsync: boolean;
  private readonly now: () => Date;
  private readonly saveClock: () => Date;
  private readonly lanes = new Map<string, Lane>();

  constructor(options: FileSessionStoreOptions = {}) {
    this.dir = resolveSessionsDir(options);
    this.fsync = options.fsync ?? true;
    this.now = options.now ?? (() => new Date());
    this.saveClock = monotonicClock(this.now);
  }

  /** The folder of one session. */
  sessionDir(id: string): string {
    assertValidSessionId(id);
    return path.join(this.dir, id);
  }

  async save(input: SessionRecordInput): Promise<SessionRecord> {
    const body = recordBodyJson(input);
    const id = input.id;
    const lane = this.lane(id);
    return this.enqueue(lane, async () => {
      await this.readTranscriptState(id, lane);
      const file = this.file(id, SNAPSHOT_FILE);
      const previous = lane.saved ?? (await this.previousTimes(id, file));
      const times = saveTimes(input, previous, this.saveClock());
      const head = { formatVersion: SNAPSHOT_FORMAT_VERSION, id, state: input.state, ...times };
      const json = prependJsonFields({ ...head, transcriptSeq: lane.lastSeq }, body);
      await this.ensureSessionDir(id);
      if (!lane.swept) {
        await this.sweepTempFiles(id);
        lane.swept = true;
      }
      await writeFileAtomic(file, json, this.fsync);
      lane.saved = times;
      return decodeRecord(json, file, id);
    });
  }

  async load(id: string): Promise<SessionRecord | undefined> {
    assertValidSessionId(id);
    await this.lanes.get(id)?.tail;
    const file = this.file(id, SNAPSHOT_FILE);
    const text = await readIfExists(file, 'utf8');
    return text === undefined ? undefined : decodeRecord(text, file, id);
  }

  async list(): Promise<SessionListEntry[]> {
    await Promise.all([...this.lanes.values()].map((lane) => lane.tail));
    let names: string[];
    try {
      names = (await readdir(this.dir, { withFileTypes: true }))
        .filter((dirent) => dirent.isDirectory() && isValidSessionId(dirent.name))
        .map((dirent) => dirent.name);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const rows = await mapLimit(names, LIST_CONCURRENCY, (id) => this.listRow(id));
    return rows.filter((row) => row !== undefined).sort(compareListEntries);
  }

  async delete(id: string): Promise<boolean> {
    assertValidSessionId(id);
    const lane = this.lane(id);
    return this.enqueue(lane, async () => {
      // Renaming first makes the removal all-or-nothing for readers, even if the process dies mid-rm.
      const trash = path.join(this.dir, `.deleted-${id}-${randomBytes(4).toString('hex')}`);
      try {
        await rename(this.sessionDir(id), trash);
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
      Object.assign(lane, freshLaneState());
      await rm(trash, { recursive: true, force: true });
      return true;
    });
  }

  async appendTranscript(id: string, entries: readonly TranscriptEntryInput[]): Promise<void> {
    assertValidSessionId(id);
    const now = this.now();
    const bodies = entries.map((entry) => transcriptEntryJson(id, entry, now));
    if (bodies.length === 0) return;
    const lane = this.lane(id);
    let batch = lane.batch;
    if (!batch) {
      const fresh: AppendBatch = { bodies: [], done: Promise.resolve() };
      fresh.done = this.enqueue(lane, () => {
        lane.batch = undefined;
        return this.writeEntries(id, lane, fresh.bodies);
      });
      lane.batch = fresh;
      batch = fresh;
    }
    batch.bodies.push(...bodies);
    return batch.done;
  }

  async readTranscript(id: string): Promise<TranscriptRead> {
    assertValidSessionId(id);
    await this.lanes.get(id)?.tail;
    const file = this.file(id, TRANSCRIPT_FILE);
    const buffer = await readIfExists(file);
    if (buffer === undefined) return { entries: [] };
    const parsed = parseTranscript(buffer, file, id);
    if (!parsed.torn) return { entries: parsed.entries };
    return { entries: parsed.entries, torn: { file, line: parsed.torn.line, bytes: parsed.torn.bytes } };
  }

  private file(id: string, name: string): string {
    return path.join(this.dir, id, name);
  }

  private lane(id: string): Lane {
    let lane = this.lanes.get(id);
    if (!lane) {
      lane = { tail: Promise.resolve(), batch: undefined, ...freshLaneState() };
      this.lanes.set(id, lane);
    }
    return lane;
  }

  /** Runs `task` after everything queued before it for the session, whatever their outcome. */
  private enqueue<T>(lane: Lane, task: () => Promise<T>): Promise<T> {
    const run = lane.tail.then(task);
    lane.tail = run.then(noop, noop);
    return run;
  }

  private async listRow(id: string): Promise<SessionListEntry | undefined> {
    const file = this.file(id, SNAPSHOT_FILE);
    try {
      const text = await readIfExists(file, 'utf8');
      // A folder without a record (only a transcript, or a save under way) is not a session yet.
      return text === undefined ? undefined : summarizeSession(decodeRecord(text, file, id));
    } catch (error) {
      const row: UnreadableSession =
        error instanceof SessionStoreError
          ? { id, error: error.message, code: error.code, file }
          : {
              id,
              error: `Session "${id}": cannot read ${file}: ${(error as Error).message}`,
              code: 'io',
              file,
            };
      const mtime = await stat(file).then((stats) => stats.mtime.toISOString(), noop);
      if (mtime) row.updatedAt = mtime;
      return row;
    }
  }

  /** Learns the last `seq` and the state of the transcript's end, once per session. */
  private async readTranscriptState(id: string, lane: Lane): Promise<void> {
    if (lane.lastSeq !== undefined) return;
    const file = this.file(id, TRANSCRIPT_FILE);
    const buffer = await readIfExists(file);
    if (buffer === undefined) {
      Object.assign(lane, { lastSeq: 0, transcriptIsNew: true, tailFix: undefined });
      return;
    }
    const parsed = parseTranscript(buffer, file, id);
    let lastSeq = 0;
    for (const entry of parsed.entries) lastSeq = Math.max(lastSeq, entry.seq);
    const tailFix: TailFix | undefined = parsed.torn
      ? { kind: 'drop', ...parsed.torn }
      : parsed.missingNewline
        ? { kind: 'newline' }
        : undefined;
    Object.assign(lane, { lastSeq, transcriptIsNew: false, tailFix });
  }

  private async writeEntries(id: string, lane: Lane, bodies: string[]): Promise<void> {
    const file = this.file(id, TRANSCRIPT_FILE);
    try {
      await this.readTranscriptState(id, lane);
      let seq = lane.lastSeq ?? 0;
      let text = '';
      const fix = lane.tailFix;
      if (fix?.kind === 'newline') text += '\n';
      if (fix?.kind === 'drop') {
        // The torn line never completed, so no caller was told it was written: drop it, and say so.
        await truncate(file, fix.offset);
        const repaired = transcriptEntryJson(
          id,
          {
            kind: 'event',
            event: 'transcript_repaired',
            data: { droppedLine: fix.line, droppedBytes: fix.bytes, fragment: fix.fragment },
          },
          this.now(),
        );
        text += `${prependJsonFields({ seq: ++seq }, repaired)}\n`;
      }
      lane.tailFix = undefined;
      for (const body of bodies) text += `${prependJsonFields({ seq: ++seq }, body)}\n`;
      await this.ensureSessionDir(id);
      const handle = await open(file, 'a');
      try {
        await handle.writeFile(text);
        if (this.fsync) await handle.datasync();
      } finally {
        await handle.close();
      }
      if (this.fsync && lane.transcriptIsNew) await fsyncDir(path.dirname(file));
      lane.lastSeq = seq;
      lane.transcriptIsNew = false;
    } catch (error) {
      // The file may now end in a partial line: read it again before the next write.
      lane.lastSeq = undefined;
      lane.tailFix = undefined;
      throw error;
    }
  }

  private async ensureSessionDir(id: string): Promise<void> {
    const created = await mkdir(this.sessionDir(id), { recursive: true });
    if (created !== undefined && this.fsync) {
      await fsyncDir(path.dirname(created));
      if (path.dirname(created) !== this.dir) await fsyncDir(this.dir);
    }
  }

  /** The times of the saved record; a corrupt one is moved aside (kept for inspection) and ignored. */
  private async previousTimes(
    id: string,
    file: string,
  ): Promise<{ createdAt: string; updatedAt: string } | undefined> {
    const text = await readIfExists(file, 'utf8');
    if (text === undefined) return undefined;
    try {
      const { createdAt, updatedAt } = decodeRecord(text, file, id);
      return { createdAt, updatedAt };
    } catch (error) {
      if (!(error instanceof SessionStoreError)) throw error;
      const stamp = this.now().toISOString().replace(/[:.]/g, '-');
      await rename(file, `${file}.corrupt-${stamp}`);
      return undefined;
    }
  }

  /** Removes temp files left by saves that crashed before their rename. */
  private async sweepTempFiles(id: string): Promise<void> {
    const dir = this.sessionDir(id);
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(
      names
        .filter((name) => name.startsWith(`${SNAPSHOT_FILE}.`) && name.endsWith('.tmp'))
        .map((name) => rm(path.join(dir, name), { force: true })),
    );
  }
}

function freshLaneState(): Pick<Lane, 'lastSeq' | 'transcriptIsNew' | 'tailFix' | 'saved' | 'swept'> {
  return { lastSeq: undefined, transcriptIsNew: false, tailFix: undefined, saved: undefined, swept: false };
}

function isValidSessionId(name: string): boolean {
  try {
    assertValidSessionId(name);
    return true;
  } catch {
    return false;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function readIfExists(file: string): Promise<Buffer | undefined>;
function readIfExists(file: string, encoding: 'utf8'): Promise<string | undefined>;
async function readIfExists(file: string, encoding?: 'utf8'): Promise<Buffer | string | undefined> {
  try {
    return encoding ? await readFile(file, encoding) : await readFile(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Writes `data` to a temp file beside `file`, flushes it, then renames it over `file`. */
async function writeFileAtomic(file: string, data: string, fsync: boolean): Promise<void> {
  const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx');
    await handle.writeFile(data);
    if (fsync) await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close().catch(noop);
    await rm(temp, { force: true }).catch(noop);
    throw error;
  }
  if (fsync) await fsyncDir(path.dirname(file));
}

/** Makes a rename or a new file in `dir` durable. Some platforms cannot open folders; they skip it. */
async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EACCES') throw error;
  } finally {
    await handle?.close();
  }
}

function corrupt(id: string, file: string, reason: string, line?: number): SessionStoreError {
  const where = line === undefined ? file : `${file} line ${line}`;
  return new SessionStoreError(
    'corrupt',
    `Session "${id}": ${where} is corrupt (${reason}). It was left as it is; repair or delete it. Other sessions are not affected.`,
    line === undefined ? { sessionId: id, file } : { sessionId: id, file, line },
  );
}

/** Parses and checks `snapshot.json`. The folder name is the id, so that a copied folder is a fork. */
function decodeRecord(text: string, file: string, id: string): SessionRecord {
  if (text.trim() === '') throw corrupt(id, file, 'the file is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(id, file, `not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corrupt(id, file, 'not a JSON object');
  }
  const { formatVersion, ...fields } = value as Record<string, unknown>;
  if (typeof formatVersion === 'number' && formatVersion > SNAPSHOT_FORMAT_VERSION) {
    throw new SessionStoreError(
      'unsupported_version',
      `Session "${id}": ${file} has format version ${formatVersion}, newer than this agentloop reads ` +
        `(${SNAPSHOT_FORMAT_VERSION}); upgrade agentloop to open it.`,
      { sessionId: id, file },
    );
  }
  if (formatVersion !== SNAPSHOT_FORMAT_VERSION)
    throw corrupt(id, file, 'missing or invalid "formatVersion"');
  for (const key of ['createdAt', 'updatedAt', 'state'] as const) {
    if (typeof fields[key] !== 'string') throw corrupt(id, file, `missing or invalid "${key}"`);
  }
  if (!Number.isSafeInteger(fields.transcriptSeq) || (fields.transcriptSeq as number) < 0) {
    throw corrupt(id, file, 'missing or invalid "transcriptSeq"');
  }
  if (!('snapshot' in fields)) throw corrupt(id, file, 'missing "snapshot"');
  return { ...fields, id } as unknown as SessionRecord;
}

interface ParsedTranscript {
  entries: TranscriptEntry[];
  /** A last line that does not parse and has no newline: a crash cut it off. */
  torn?: { offset: number; line: number; bytes: number; fragment: string };
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
        throw corrupt(id, file, problem, line);
      }
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return { entries, missingNewline: buffer.length > 0 && buffer[buffer.length - 1] !== 0x0a };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
