import { describe, expect, it } from 'vitest';
import type { SessionStore, TranscriptEntryInput } from '../src/index.js';
import { MemorySessionStore } from '../src/session/memory-session-store.js';
import type { WriteOptions } from '../src/session/session-lease.js';
import type { SessionRecordInput } from '../src/session/session-store.js';
import {
  describeSessionStoreConformance,
  type StoreUnderTest,
  type TestApi,
} from '../src/store-conformance/index.js';

// The kit (agentloop/testing/stores) run by a runner of its own, not vitest's: it needs only the four
// registration functions. A correct store passes every case; a store broken in one way fails exactly
// the cases about that (the kit would catch it in a store author's project).

type Hook = () => Promise<void>;
interface Scope {
  name: string;
  before: Hook[];
  after: Hook[];
}

/** Collects the tests the kit registers, then runs them one by one with their hooks. */
async function runKit(subject: StoreUnderTest): Promise<{ passed: string[]; failed: string[] }> {
  const tests: { name: string; scopes: Scope[]; body: Hook }[] = [];
  const stack: Scope[] = [];
  const api: TestApi = {
    describe(name, body) {
      stack.push({ name, before: [], after: [] });
      body();
      stack.pop();
    },
    it(name, body) {
      tests.push({ name, scopes: [...stack], body });
    },
    beforeEach: (hook) => stack.at(-1)!.before.push(hook),
    afterEach: (hook) => stack.at(-1)!.after.push(hook),
  };
  describeSessionStoreConformance(api, subject);
  const passed: string[] = [];
  const failed: string[] = [];
  for (const test of tests) {
    const name = [...test.scopes.slice(1).map((s) => s.name), test.name].join(' > ');
    try {
      for (const scope of test.scopes) for (const hook of scope.before) await hook();
      try {
        await test.body();
      } finally {
        for (const scope of [...test.scopes].reverse()) for (const hook of scope.after) await hook();
      }
      passed.push(name);
    } catch {
      failed.push(name);
    }
  }
  return { passed, failed };
}

/** Drops the idempotency key of every started call it appends. */
class KeylessStore extends MemorySessionStore {
  override appendTranscript(id: string, entries: readonly TranscriptEntryInput[], options?: WriteOptions) {
    const keyless = entries.map((entry) => {
      if (entry.kind !== 'tool_call_started') return entry;
      const { idempotencyKey: _dropped, ...rest } = entry;
      return rest;
    });
    return super.appendTranscript(id, keyless, options);
  }
}

/** Hands out leases but never checks them on writes. */
class UnfencedStore extends MemorySessionStore {
  override save(record: SessionRecordInput) {
    return super.save(record);
  }
  override appendTranscript(id: string, entries: readonly TranscriptEntryInput[]) {
    return super.appendTranscript(id, entries);
  }
}

const FENCING =
  'ownership and inbox > fencing: writes and renewals with a lease that was taken over are refused; nothing is written';
const CRASH_WRITES =
  'after a crash > crash: a new process finds every save and append that returned, continues seq and keeps createdAt';
const CRASH_CALL =
  'after a crash > crash: a call started and never finished is still open after a crash, with its arguments and idempotency key';
const CRASH_LEASE =
  "after a crash > crash: a crashed owner's lease holds until it lapses; then the next owner gets a higher token and the crashed owner's late writes are refused";

describe('the store conformance kit', () => {
  it('runs under a runner that only has describe/it/beforeEach/afterEach, and a correct store passes every case', async () => {
    // One memory store seen by "both processes" is a store that survives a restart.
    const { passed, failed } = await runKit({
      name: 'memory',
      create: () => new MemorySessionStore(),
      reopen: (s) => s,
    });
    expect(failed).toEqual([]);
    expect(passed).toEqual(expect.arrayContaining([FENCING, CRASH_WRITES, CRASH_CALL, CRASH_LEASE]));
    expect(passed.length).toBeGreaterThan(45);
  });

  it('registers the crash cases only for a store that can be reopened', async () => {
    const { passed } = await runKit({ name: 'memory', create: () => new MemorySessionStore() });
    expect(passed.filter((name) => name.startsWith('after a crash'))).toEqual([]);
  });

  it('fails a store that drops idempotency keys, in the cases about them', async () => {
    const { failed } = await runKit({ name: 'keyless', create: () => new KeylessStore(), reopen: (s) => s });
    expect(failed).toEqual([
      "transcript > keeps a started call's idempotency key and arguments exactly, so a rerun after a restore gets the same key",
      CRASH_CALL,
    ]);
  });

  it('fails a store that does not fence writes of a lease that was taken over', async () => {
    const { failed } = await runKit({
      name: 'unfenced',
      create: () => new UnfencedStore(),
      reopen: (s) => s,
    });
    expect(failed).toEqual([FENCING, CRASH_LEASE]);
  });

  it('fails a store that keeps nothing across a restart, in every crash case', async () => {
    const { failed } = await runKit({
      name: 'forgetful',
      create: () => new MemorySessionStore(),
      reopen: () => new MemorySessionStore(),
    });
    expect(failed).toEqual([CRASH_WRITES, CRASH_CALL, CRASH_LEASE]);
  });

  it('disposes of every store it made and closes every store it reopened', async () => {
    const made = new Set<SessionStore>();
    const reopened = new Set<SessionStore>();
    const disposed: SessionStore[] = [];
    const closed: SessionStore[] = [];
    const { failed } = await runKit({
      name: 'counted',
      create: () => {
        const store = new MemorySessionStore();
        made.add(store);
        return store;
      },
      reopen: (store) => {
        const again = new Proxy(store, {});
        reopened.add(again);
        return again;
      },
      close: (store) => void closed.push(store),
      dispose: (store) => void disposed.push(store),
    });
    expect(failed).toEqual([]);
    expect(new Set(disposed)).toEqual(made);
    expect(disposed.length).toBe(made.size);
    expect(new Set(closed)).toEqual(reopened);
    expect(reopened.size).toBe(3);
  });
});
