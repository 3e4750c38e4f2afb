import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, ftruncateSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { DSYNC_WRITES, fdatasyncFd, fsyncDir, writeAllAt } from './durable-write.js';
import { openNoFollowSync } from './no-follow.js';
import { readIfExists } from './read-if-exists.js';

/**
 * The record's two slot files in a session's folder. A save overwrites the slot that does not hold the
 * newest record, in place, so a save cut short (a crash, a full disk) leaves the newest record whole
 * in the other slot. `snapshot.json` is also where records of format 1 (written by atomic rename) were.
 */
export const RECORD_SLOT_FILES = ['snapshot.json', 'snapshot.1.json'] as const;

/** Index of a slot in {@link RECORD_SLOT_FILES}. */
export type SlotIndex = 0 | 1;

/** Slot files are padded to a multiple of this, so that their size (metadata a flush must write) rarely changes. */
const SLOT_BLOCK = 4096;
/**
 * The seal that starts a slot file: the save's sequence number and the SHA-256 of both (the number
 * counts too: a write cut short after the seal's first bytes must not pass an old record for a new one).
 */
const SEAL = /^\{"save":\{"seq":(\d{1,15}),"sha256":"([0-9a-f]{64})"\},/;
const SEAL_START = '{"save":';

/** Why a slot file that holds nothing but blanks is broken (a first save that wrote nothing yet). */
export const EMPTY_SLOT_REASON = 'the file is empty';

/** What one slot file holds. */
export type SlotRead =
  | { kind: 'missing' }
  /** A whole record; `seq` 0 for a record of format 1 (in `snapshot.json`, without a seal). */
  | { kind: 'record'; seq: number; text: string }
  /** A slot whose seal does not match its text: a save cut short, or an edit by hand. */
  | { kind: 'broken'; reason: string };

/** Both slots of a session: which holds the newest whole record, and what each holds. */
export interface SlotsRead {
  slots: readonly [SlotRead, SlotRead];
  /** The slot with the whole record of the highest sequence number; undefined when neither has one. */
  newest: SlotIndex | undefined;
  /** The highest sequence number seen in either slot (0 when none): the next save uses one more. */
  seq: number;
}

/** `record` (the JSON text of a whole record, an object) as a slot file's bytes for save number `seq`. */
export function sealRecord(record: string, seq: number): Uint8Array {
  const sha256 = sealDigest(seq, record);
  const sealed = `{"save":{"seq":${seq},"sha256":"${sha256}"},${record.slice(1)}`;
  const bytes = Buffer.byteLength(sealed) + 1;
  const padded = Math.ceil(bytes / SLOT_BLOCK) * SLOT_BLOCK;
  return Buffer.from(`${sealed}${' '.repeat(padded - bytes)}\n`);
}

/** Reads what a slot file's `text` holds; `legacy` allows a record of format 1 without a seal. */
export function unsealSlot(text: string | undefined, legacy: boolean): SlotRead {
  if (text === undefined) return { kind: 'missing' };
  const seal = SEAL.exec(text);
  if (!seal) {
    if (text.trim() === '') return { kind: 'broken', reason: EMPTY_SLOT_REASON };
    if (legacy && !text.startsWith(SEAL_START)) return { kind: 'record', seq: 0, text };
    return {
      kind: 'broken',
      reason: 'its seal is missing or damaged (a save cut short, or an edit by hand)',
    };
  }
  // The record is one line (JSON text has no raw line breaks): what follows the padding's line break
  // is left from a longer record before, when cutting the file to size did not reach the disk.
  const end = text.indexOf('\n');
  const record = `{${text.slice(seal[0].length, end === -1 ? undefined : end).trimEnd()}`;
  const seq = Number(seal[1]);
  if (sealDigest(seq, record) !== seal[2]) {
    return {
      kind: 'broken',
      reason: 'its text does not match its seal (a save cut short, or an edit by hand)',
    };
  }
  return { kind: 'record', seq, text: record };
}

function sealDigest(seq: number, record: string): string {
  return createHash('sha256').update(`${seq}\n`).update(record).digest('hex');
}

/** Reads both slot files in `dir`. */
export async function readSlots(dir: string): Promise<SlotsRead> {
  const texts = await Promise.all(
    RECORD_SLOT_FILES.map((name) => readIfExists(path.join(dir, name), 'utf8')),
  );
  const slots = [unsealSlot(texts[0], true), unsealSlot(texts[1], false)] as const;
  let newest: SlotIndex | undefined;
  let seq = 0;
  for (const index of [0, 1] as const) {
    const slot = slots[index];
    if (slot.kind !== 'record') continue;
    seq = Math.max(seq, slot.seq);
    if (newest === undefined || slot.seq > (slots[newest] as { seq: number }).seq) newest = index;
  }
  return { slots, newest, seq };
}

/** Whether neither slot has a whole record though one of them has something: what a reader retries once. */
export function onlyBroken(read: SlotsRead): boolean {
  return read.newest === undefined && read.slots.some((slot) => slot.kind === 'broken');
}

/**
 * Writes `bytes` over the slot file `file` in place from its start, durably with `fsync` (`O_DSYNC`:
 * the write returns once the data is on disk; the file's size only changes when the record crosses a
 * {@link SLOT_BLOCK} boundary). A file left longer by a larger record before is cut to size. With
 * `created` (the file did not exist) the folder is flushed too, so that its new entry survives a power loss.
 */
export async function writeSlot(
  file: string,
  bytes: Uint8Array,
  fsync: boolean,
  created: boolean,
): Promise<void> {
  const sync = fsync ? DSYNC_WRITES : 0;
  // Opened, measured and closed in place (microseconds, nothing to wait for on disk); only the write
  // goes through the thread pool.
  // Never through a link: one put in a slot's place would have the record written over its target.
  const fd = openNoFollowSync(file, constants.O_WRONLY | constants.O_CREAT | sync);
  try {
    await writeAllAt(fd, bytes, 0);
    if (fsync && sync === 0) await fdatasyncFd(fd);
    if (fstatSync(fd).size > bytes.length) ftruncateSync(fd, bytes.length);
  } finally {
    closeSync(fd);
  }
  if (fsync && created) await fsyncDir(path.dirname(file));
}

/** Moves a slot file that cannot be used aside to `<file>.corrupt-<now>` (kept for inspection). */
export async function moveSlotAside(file: string, now: Date): Promise<void> {
  await rename(file, `${file}.corrupt-${now.toISOString().replace(/[:.]/g, '-')}`);
}
