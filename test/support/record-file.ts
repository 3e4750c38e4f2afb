import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RECORD_SLOT_FILES, readSlots, sealRecord } from '../../src/session/file-store/record-slots.js';

/** A file-store record as a test reads it: the slot file holding the newest record, and the record parsed. */
export interface RecordFile {
  file: string;
  record: Record<string, unknown> & {
    snapshot: Record<string, unknown> & { context: Record<string, unknown> };
  };
}

/** The newest whole record in the file-store session folder `dir` (the one `load` returns), with its save number. */
async function newestSlot(dir: string): Promise<RecordFile & { seq: number }> {
  const read = await readSlots(dir);
  if (read.newest === undefined) throw new Error(`no whole record in ${dir}`);
  const { seq, text } = read.slots[read.newest] as { seq: number; text: string };
  return { file: path.join(dir, RECORD_SLOT_FILES[read.newest]), record: JSON.parse(text), seq };
}

/** The newest whole record in the file-store session folder `dir` (the one `load` returns). */
export async function readRecordFile(dir: string): Promise<RecordFile> {
  const { file, record } = await newestSlot(dir);
  return { file, record };
}

/**
 * Changes the newest record of the session folder `dir` and seals it again under the same save
 * number, as a bug of another version could write it (an edit by hand breaks the seal instead, and
 * the store takes the slot for a save cut short). Returns the slot file.
 */
export async function editRecordFile(
  dir: string,
  edit: (record: RecordFile['record']) => void,
): Promise<string> {
  const { file, record, seq } = await newestSlot(dir);
  edit(record);
  await writeFile(file, sealRecord(JSON.stringify(record), seq));
  return file;
}
