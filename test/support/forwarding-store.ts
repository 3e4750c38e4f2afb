import type { SessionRecordInput, SessionStore, TranscriptEntryInput } from '../../src/index.js';

/**
 * A store that passes every call to `inner`: the base of the test stores that change only some calls
 * (a crash, a full disk, a held write) while the data stays in a real store.
 */
export class ForwardingStore<S extends SessionStore = SessionStore> implements SessionStore {
  constructor(readonly inner: S) {}
  save(record: SessionRecordInput) {
    return this.inner.save(record);
  }
  appendTranscript(id: string, entries: readonly TranscriptEntryInput[]) {
    return this.inner.appendTranscript(id, entries);
  }
  load(id: string) {
    return this.inner.load(id);
  }
  list() {
    return this.inner.list();
  }
  delete(id: string) {
    return this.inner.delete(id);
  }
  readTranscript(id: string) {
    return this.inner.readTranscript(id);
  }
}
