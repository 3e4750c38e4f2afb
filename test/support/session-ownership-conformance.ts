import { expect, it } from 'vitest';
import { hasInbox } from '../../src/session/session-inbox.js';
import { hasOwnership, type SessionLease } from '../../src/session/session-lease.js';
import { type SessionStore, SessionStoreError } from '../../src/session/session-store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function refusal(promise: Promise<unknown>): Promise<SessionStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SessionStoreError);
  return error as SessionStoreError;
}

/**
 * The ownership and inbox cases of the store conformance suite (docs/scale-out.md), registered
 * inside `describeSessionStoreConformance`; a store without the capability skips them (every store
 * that ships has ownership; the file store has no inbox yet).
 */
export function ownershipConformance(store: () => SessionStore): void {
  const owned = () => {
    const s = store();
    if (!hasOwnership(s)) return undefined;
    return s;
  };

  it('ownership: one owner at a time; another gets in_use naming the pid', async () => {
    const s = owned();
    if (!s) return;
    const lease = await s.acquireLease('s1', { owner: 'a', leaseMs: 5_000 });
    expect(lease).toMatchObject({ sessionId: 's1', owner: 'a', pid: process.pid });
    expect(lease.token).toBeGreaterThan(0);
    const error = await refusal(s.acquireLease('s1', { owner: 'b', leaseMs: 5_000 }));
    expect(error.code).toBe('in_use');
    expect(error.message).toContain(`in use by pid ${process.pid}`);
    // The holder may take it again; another session is free.
    expect((await s.acquireLease('s1', { owner: 'a', leaseMs: 5_000 })).owner).toBe('a');
    expect((await s.acquireLease('s2', { owner: 'b', leaseMs: 5_000 })).owner).toBe('b');
  });

  it('ownership: a released or lapsed lease goes to the next owner with a higher fencing token', async () => {
    const s = owned();
    if (!s) return;
    const first = await s.acquireLease('s1', { owner: 'a', leaseMs: 5_000 });
    await s.releaseLease(first);
    const second = await s.acquireLease('s1', { owner: 'b', leaseMs: 40 });
    expect(second.token).toBeGreaterThan(first.token);
    await sleep(80);
    const third = await s.acquireLease('s1', { owner: 'c', leaseMs: 5_000 });
    expect(third.token).toBeGreaterThan(second.token);
    // Releasing a lease that was taken over changes nothing.
    await s.releaseLease(second);
    expect((await refusal(s.acquireLease('s1', { owner: 'd', leaseMs: 5_000 }))).code).toBe('in_use');
  });

  it('fencing: writes and renewals with a lease that was taken over are refused; nothing is written', async () => {
    const s = owned();
    if (!s) return;
    const old = await s.acquireLease('s1', { owner: 'paused', leaseMs: 30 });
    await s.save({ id: 's1', state: 'AwaitingInput', snapshot: { by: 'paused' } }, { lease: old });
    await s.appendTranscript('s1', [{ kind: 'event', event: 'paused-1' }], { lease: old });
    await sleep(60);
    const now = await s.acquireLease('s1', { owner: 'new', leaseMs: 5_000 });
    await s.save({ id: 's1', state: 'Completed', snapshot: { by: 'new' } }, { lease: now });
    const saving = await refusal(
      s.save({ id: 's1', state: 'Error', snapshot: { by: 'paused' } }, { lease: old }),
    );
    expect(saving.code).toBe('stale_lease');
    expect(saving.message).toContain(`token ${old.token}`);
    const appending = await refusal(
      s.appendTranscript('s1', [{ kind: 'event', event: 'paused-2' }], { lease: old }),
    );
    expect(appending.code).toBe('stale_lease');
    expect((await refusal(s.renewLease(old, 5_000))).code).toBe('stale_lease');
    await s.appendTranscript('s1', [{ kind: 'event', event: 'new-1' }], { lease: now });
    expect((await s.load('s1'))?.snapshot).toEqual({ by: 'new' });
    const events = (await s.readTranscript('s1')).entries.map((e) => (e.kind === 'event' ? e.event : e.kind));
    expect(events).toEqual(['paused-1', 'new-1']);
  });

  it('ownership: a renewed lease outlives its first term', async () => {
    const s = owned();
    if (!s) return;
    const lease = await s.acquireLease('s1', { owner: 'a', leaseMs: 60 });
    const renewed = await s.renewLease(lease, 5_000);
    expect(renewed.token).toBe(lease.token);
    await sleep(100);
    expect((await refusal(s.acquireLease('s1', { owner: 'b', leaseMs: 5_000 }))).code).toBe('in_use');
    await s.save({ id: 's1', state: 'AwaitingInput', snapshot: null }, { lease: renewed });
  });

  it('inbox: items in post order, a second answer to one approval refused, completion fenced', async () => {
    const s = store();
    if (!hasInbox(s) || !hasOwnership(s)) return;
    const m = await s.postInbox('new-session', { kind: 'message', text: 'hello' });
    expect(m).toMatchObject({ kind: 'message', text: 'hello', seq: 1 });
    const yes = await s.postInbox('new-session', { kind: 'approval', toolCallId: 'c1', approved: true });
    expect(yes?.seq).toBeGreaterThan(1);
    expect(
      await s.postInbox('new-session', { kind: 'approval', toolCallId: 'c1', approved: false }),
    ).toBeUndefined();
    await s.postInbox('new-session', { kind: 'interrupt' });
    const items = await s.readInbox('new-session');
    expect(items.map((i) => i.kind)).toEqual(['message', 'approval', 'interrupt']);
    expect(items[1]).toMatchObject({ approved: true, toolCallId: 'c1' });
    const [lease] = await s.claimSessions({ owner: 'w1', leaseMs: 30, limit: 10 });
    expect(lease?.sessionId).toBe('new-session');
    await s.completeInbox('new-session', [items[0]!.seq], { lease });
    expect((await s.readInbox('new-session')).map((i) => i.kind)).toEqual(['approval', 'interrupt']);
    await sleep(60);
    const [next] = await s.claimSessions({ owner: 'w2', leaseMs: 5_000, limit: 10 });
    expect(next?.token).toBeGreaterThan(lease!.token);
    const stale = await refusal(s.completeInbox('new-session', [items[1]!.seq], { lease }));
    expect(stale.code).toBe('stale_lease');
    expect((await s.readInbox('new-session')).length).toBe(2);
  });

  it('inbox: claims take sessions with items and no live lease, each by one claimant', async () => {
    const s = store();
    if (!hasInbox(s) || !hasOwnership(s)) return;
    expect(await s.claimSessions({ owner: 'w', leaseMs: 5_000, limit: 10 })).toEqual([]);
    for (let i = 0; i < 12; i++) await s.postInbox(`s${i}`, { kind: 'message', text: `m${i}` });
    await s.acquireLease('s0', { owner: 'busy', leaseMs: 5_000 });
    await s.save({ id: 'idle', state: 'AwaitingInput', snapshot: null });
    const claims = await Promise.all(
      ['w1', 'w2', 'w3'].map((owner) => s.claimSessions({ owner, leaseMs: 5_000, limit: 5 })),
    );
    const ids = claims.flat().map((l: SessionLease) => l.sessionId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(Array.from({ length: 11 }, (_, i) => `s${i + 1}`).sort());
    expect(await s.claimSessions({ owner: 'w4', leaseMs: 5_000, limit: 5 })).toEqual([]);
  });
}
