import { writeFile } from 'node:fs/promises';
import type { FileSessionStore, SessionRecordInput, TranscriptEntryInput } from '../../src/index.js';
import { ForwardingStore } from './forwarding-store.js';

/**
 * A real ENOSPC from the kernel: `/dev/full` refuses every write with it. (Where there is no
 * `/dev/full`, an error shaped like Node's.)
 */
export async function enospc(): Promise<NodeJS.ErrnoException> {
  try {
    await writeFile('/dev/full', 'x');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return error as NodeJS.ErrnoException;
  }
  return Object.assign(new Error('ENOSPC: no space left on device, write'), {
    code: 'ENOSPC',
    errno: -28,
    syscall: 'write',
  });
}

/**
 * A fault-injecting store, not a mocked file system: every call goes to a real `FileSessionStore`
 * (real files in a temp dir), except that while `full` is set, transcript appends and saves (as
 * `fails` selects) reject with a real ENOSPC error without reaching it, as on a full disk.
 */
export class DiskFullStore extends ForwardingStore<FileSessionStore> {
  full = false;
  fails: { appends: boolean; saves: boolean } = { appends: true, saves: true };
  /** Writes refused so far. */
  refused: { kind: 'append' | 'save'; entries?: number }[] = [];

  files(id: string) {
    return this.inner.files(id);
  }

  override async save(record: SessionRecordInput) {
    if (this.full && this.fails.saves) {
      this.refused.push({ kind: 'save' });
      throw await enospc();
    }
    return super.save(record);
  }

  override async appendTranscript(id: string, entries: readonly TranscriptEntryInput[]) {
    if (this.full && this.fails.appends) {
      this.refused.push({ kind: 'append', entries: entries.length });
      throw await enospc();
    }
    return super.appendTranscript(id, entries);
  }
}
