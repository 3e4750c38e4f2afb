import path from 'node:path';
import { mkdirDurable } from './durable-write.js';
import { isMissing } from './read-if-exists.js';

export { RECORD_SLOT_FILES } from './record-slots.js';

import {
  corruptFileError,
  prependJsonFields,
  type SessionRecord,
  storedRecordJson,
} from '../session-store.js';
import { SessionStoreError } from '../session-store-error.js';
import {
  EMPTY_SLOT_REASON,
  moveSlotAside,
  onlyBroken,
  RECORD_SLOT_FILES,
  readSlots,
  type SlotIndex,
  type SlotRead,
  sealRecord,
  writeSlot,
} from './record-slots.js';

/** The record's first slot file in a session's folder (the second is `snapshot.1.json`; see `record-slots.ts`). */
export const SNAPSHOT_FILE = RECORD_SLOT_FILES[0];
/**
 * Version of the record's layout; a newer one is refused rather than misread. 2: the record is in two
 * sealed slot files written in place; 1 (still read): `snapshot.json` alone, replaced by a rename.
 */
export const SNAPSHOT_FORMAT_VERSION = 2;

/** The times a saved record carries. */
export type SavedTimes = Pick<SessionRecord, 'createdAt' | 'updatedAt'>;

/**
 * The text of a record: the format version and the store's fields first, then `body` (the
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

/** Parses and checks a record's text. The folder name is the id, so that a copied folder is a fork. */
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
  if (formatVersion !== SNAPSHOT_FORMAT_VERSION && formatVersion !== 1)
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

/** A session's newest record and the slot file it was read from. */
export interface RecordRead {
  record: SessionRecord;
  file: string;
}

/**
 * The newest whole record in the session folder `dir`, or undefined when it has none. Throws the
 * `corrupt` {@link SessionStoreError} naming the slot file when no slot holds a whole record, or when
 * the newest does not decode.
 */
export async function readRecord(dir: string, id: string): Promise<RecordRead | undefined> {
  let read = await readSlots(dir);
  // Neither slot whole: another process's saves may have been writing both while this read them.
  if (onlyBroken(read)) read = await readSlots(dir);
  if (read.newest === undefined) {
    // Only empty slots: a first save under way, or cut before its first byte reached the file (a slot is
    // written in place from its start, so a slot that once held a record never reads empty): no record.
    if (read.slots.every((slot) => slot.kind === 'missing' || isEmptySlot(slot))) return undefined;
    for (const index of [0, 1] as const) {
      const slot = read.slots[index];
      if (slot.kind === 'broken' && !isEmptySlot(slot))
        throw corruptFileError(id, path.join(dir, RECORD_SLOT_FILES[index]), slot.reason);
    }
    return undefined;
  }
  const file = path.join(dir, RECORD_SLOT_FILES[read.newest]);
  const { text } = read.slots[read.newest] as { text: string };
  return { record: decodeSnapshot(text, file, id), file };
}

/** What a store writing a session's record knows about its slots. */
export interface SlotsState {
  /** The sequence number of the last save; the next uses one more. */
  seq: number;
  /** The slot holding the newest whole record, which the next save must not overwrite. */
  newest: SlotIndex | undefined;
  /** Which slot files exist (a save that creates one flushes the folder too). */
  exists: [boolean, boolean];
  /** The newest record holds format 1: the next save writes both slots, so no older agentloop misreads them. */
  legacy: boolean;
  /** The times of the newest record, kept by the next save. */
  times: SavedTimes | undefined;
}

/**
 * Reads the slots of the session folder `dir` before its first save in this process. A newest record
 * that does not decode, or slots of which none is whole, are moved aside to `<file>.corrupt-<now>`
 * (kept for inspection) and count as none.
 */
export async function readSlotsState(dir: string, id: string, now: () => Date): Promise<SlotsState> {
  const read = await readSlots(dir);
  const exists: [boolean, boolean] = [read.slots[0].kind !== 'missing', read.slots[1].kind !== 'missing'];
  const state: SlotsState = { seq: read.seq, newest: read.newest, exists, legacy: false, times: undefined };
  const unusable: SlotIndex[] = [];
  if (read.newest === undefined) {
    for (const index of [0, 1] as const) if (read.slots[index].kind === 'broken') unusable.push(index);
  } else {
    const slot = read.slots[read.newest] as { seq: number; text: string };
    try {
      const file = path.join(dir, RECORD_SLOT_FILES[read.newest]);
      const { createdAt, updatedAt } = decodeSnapshot(slot.text, file, id);
      state.times = { createdAt, updatedAt };
      state.legacy = slot.seq === 0;
    } catch (error) {
      if (!(error instanceof SessionStoreError)) throw error;
      unusable.push(read.newest);
      state.newest = undefined;
    }
  }
  for (const index of unusable) {
    await moveSlotAside(path.join(dir, RECORD_SLOT_FILES[index]), now());
    state.exists[index] = false;
  }
  return state;
}

/**
 * Writes `record` (a record's text) as the next save into the slot that does not hold the newest
 * record, and returns the slots' state after it. The save of a session whose newest record holds
 * format 1 writes the other slot too. A folder removed since (by hand) is made again, as the first save did.
 */
export async function writeNextSlot(
  dir: string,
  state: SlotsState,
  record: string,
  times: SavedTimes,
  fsync: boolean,
): Promise<SlotsState> {
  const writeFrom = async (from: SlotsState): Promise<SlotsState> => {
    let next = from;
    for (let writes = from.legacy ? 2 : 1; writes > 0; writes--) {
      const index: SlotIndex = next.newest === 0 ? 1 : 0;
      const seq = next.seq + 1;
      const file = path.join(dir, RECORD_SLOT_FILES[index]);
      await writeSlot(file, sealRecord(record, seq), fsync, !next.exists[index]);
      const exists: [boolean, boolean] = [...next.exists];
      exists[index] = true;
      next = { seq, newest: index, exists, legacy: false, times };
    }
    return next;
  };
  return writeFrom(state).catch(async (error: unknown) => {
    if (!isMissing(error)) throw error;
    await mkdirDurable(dir, fsync);
    return writeFrom({ ...state, exists: [false, false], legacy: false });
  });
}

function isEmptySlot(slot: SlotRead): boolean {
  return slot.kind === 'broken' && slot.reason === EMPTY_SLOT_REASON;
}
