import type { SessionRecordInput, TranscriptEntryInput } from '../../src/index.js';
import { ForwardingStore } from './forwarding-store.js';

/**
 * A store that stops writing when `crash()` is called: what a killed process leaves behind. Its writes
 * from then on never resolve; reads still go to `inner`. `savesStopped` stops only the saves (appends
 * still go through): the process died between the last transcript line and the save.
 */
export class CrashableStore extends ForwardingStore {
  crashed = false;
  savesStopped = false;
  crash() {
    this.crashed = true;
  }
  override save(record: SessionRecordInput) {
    return this.crashed || this.savesStopped ? new Promise<never>(() => {}) : super.save(record);
  }
  override appendTranscript(id: string, entries: readonly TranscriptEntryInput[]) {
    return this.crashed ? new Promise<never>(() => {}) : super.appendTranscript(id, entries);
  }
}
