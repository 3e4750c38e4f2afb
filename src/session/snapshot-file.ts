import { rename } from 'node:fs/promises';
import { readIfExists } from './read-if-exists.js';
import {
  corruptFileError,
  prependJsonFields,
  type SessionRecord,
  SessionStoreError,
  storedRecordJson,
} from './session-store.js';

/** The record file in a session's folder (replaced atomically by each save). */
export const SNAPSHOT_FILE = 'snapshot.json';
/** Version of the `snapshot.json` layout; a newer one is refused rather than misread. */
export const SNAPSHOT_FORMAT_VERSION = 1;

/** The times a saved record carries. */
export type SavedTimes = Pick<SessionRecord, 'createdAt' | 'updatedAt'>;

/**
 * The text of `snapshot.json`: the format version and the store's fields first, then `body` (the
 * caller's fields from `recordBodyJson`, the large snapshot last), so `head -c 300` shows what it is.
 */
export function encodeSnapshot(
  id: string,
  state: string,
  times: SavedTimes,
  transcriptSeq: number,
  body: string,
): string {
  const record = storedRecordJson({ id, state, ...times, transcriptSeq }, body);
  return prependJsonFields({ formatVersion: SNAPSHOT_FORMAT_VERSION }, record);
}

/** Parses and checks `snapshot.json`. The folder name is the id, so that a copied folder is a fork. */
export function decodeSnapshot(text: string, file: string, id: string): SessionRecord {
  if (text.trim() === '') throw corruptFileError(id, file, 'the file is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corruptFileError(id, file, `not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corruptFileError(id, file, 'not a JSON object');
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
    throw corruptFileError(id, file, 'missing or invalid "formatVersion"');
  for (const key of ['createdAt', 'updatedAt', 'state'] as const) {
    if (typeof fields[key] !== 'string') throw corruptFileError(id, file, `missing or invalid "${key}"`);
  }
  if (!Number.isSafeInteger(fields.transcriptSeq) || (fields.transcriptSeq as number) < 0) {
    throw corruptFileError(id, file, 'missing or invalid "transcriptSeq"');
  }
  if (!('snapshot' in fields)) throw corruptFileError(id, file, 'missing "snapshot"');
  return { ...fields, id } as unknown as SessionRecord;
}

/**
 * The times of the record in `file`, or undefined when there is none. A corrupt record is moved
 * aside to `<file>.corrupt-<now>` (kept for inspection) and counts as none.
 */
export async function readSavedTimes(
  file: string,
  id: string,
  now: () => Date,
): Promise<SavedTimes | undefined> {
  const text = await readIfExists(file, 'utf8');
  if (text === undefined) return undefined;
  try {
    const { createdAt, updatedAt } = decodeSnapshot(text, file, id);
    return { createdAt, updatedAt };
  } catch (error) {
    if (!(error instanceof SessionStoreError)) throw error;
    const stamp = now().toISOString().replace(/[:.]/g, '-');
    await rename(file, `${file}.corrupt-${stamp}`);
    return undefined;
  }
}
