import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import { describeSessionStoreConformance } from '../src/store-conformance/index.js';

describeSessionStoreConformance(
  { describe, it, beforeEach, afterEach },
  { name: 'MemorySessionStore', create: () => new MemorySessionStore() },
);

describe('MemorySessionStore', () => {
  it('stamps times from the given clock, 1 ms apart when the clock stands still', async () => {
    const store = new MemorySessionStore({ now: () => new Date('2030-01-01T00:00:00.000Z') });
    const first = await store.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    const second = await store.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    expect(first.updatedAt).toBe('2030-01-01T00:00:00.000Z');
    expect(second.updatedAt).toBe('2030-01-01T00:00:00.001Z');
    await store.appendTranscript('s1', [{ kind: 'event', event: 'x' }]);
    expect((await store.readTranscript('s1')).entries[0]?.at).toBe('2030-01-01T00:00:00.000Z');
  });

  it('keeps separate stores separate', async () => {
    const a = new MemorySessionStore();
    const b = new MemorySessionStore();
    await a.save({ id: 's1', state: 'AwaitingInput', snapshot: null });
    expect(await b.load('s1')).toBeUndefined();
  });
});
