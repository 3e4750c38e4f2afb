// What the server uses of session/ and bundle/, imported here only, so that when those folders move
// their files into rooms, one file is re-pointed.

export type { BundleAgent } from '../bundle/index.js';
export { MemorySessionStore } from '../session/memory-session-store.js';
export { hasInbox, type InboxItem } from '../session/session-inbox.js';
export { hasOwnership, newOwnerName, type SessionLease } from '../session/session-lease.js';
export type { SessionRecord, SessionStore } from '../session/session-store.js';
export { SessionStoreError } from '../session/session-store-error.js';
export type { TranscriptEntry, TranscriptEntryInput } from '../session/transcript.js';
