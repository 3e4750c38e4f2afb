import assert from 'node:assert/strict';
import { hasInbox } from '../session/session-inbox.js';
import { hasOwnership, type SessionLease } from '../session/session-lease.js';
import type { SessionStore } from '../session/session-store.js';
import { assertMatches, refusal } from './check.js';
import { sleep } from './fixtures.js';
import type { TestApi } from './test-api.js';

/**
 * Leases, fencing and the inbox (docs/scale-out.md). A store without the capability (no
 * `acquireLease`, no `postInbox`) passes these cases without running them: both are optional.
 */
export function ownershipCases({ it }: TestApi, store: () => SessionStore): void {
  const owned = () => {
    const s = store();
    return hasOwnership(s) ? s : undefined;
  };

  it('ownership: one owner at a time; another gets in_use naming the pid', async () => {
    const s = owned();
    if (!s) return;
    const lease = await s.acquireLease('s1', { owner: 'a', leaseMs: 5_000 });
    assertMatches(lease, { sessionId: 's1', owner: 'a', pid: process.pid }, 'lease');
    assert.ok(lease.token > 0, `token ${lease.token} > 0`);
    const error = await refusal(s.acquireLease('s1', { owner: 'b', leaseMs: 5_000 }), 'in_use');
    assert.ok(error.message.includes(`in use by pid ${process.pid}`), error.message);
    // The holder may take it again; another session is free.
    assert.equal((await s.acquireLease('s1', { owner: 'a', leaseMs: 5_000 })).owner, 'a');
    assert.equal((await s.acquireLease('s2', { owner: 'b', leaseMs: 5_000 })).owner, 'b');
  });

  it('ownership: a released or lapsed lease goes to the next owner with a higher fencing token', async () => {
    const s = owned();
    if (!s) return;
    const first = await s.acquireLease('s1', { owner: 'a', leaseMs: 5_000 });
    await s.releaseLease(first);
    const second = await s.acquireLease('s1', { owner: 'b', leaseMs: 40 });
    assert.ok(second.token > first.token, `token ${second.token} > ${first.token}`);
    await sleep(80);
    const third = await s.acquireLease('s1', { owner: 'c', leaseMs: 5_000 });
    assert.ok(third.token > second.token, `token ${third.token} > ${second.token}`);
    // Releasing a lease that was taken over changes nothing.
    await s.releaseLease(second);
    await refusal(s.acquireLease('s1', { owner: 'd', leaseMs: 5_000 }), 'in_use');
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
      'stale_lease',
    );
    assert.ok(saving.message.includes(`token ${old.token}`), saving.message);
    await refusal(
      s.appendTranscript('s1', [{ kind: 'event', event: 'paused-2' }], { lease: old }),
      'stale_lease',
    );
    await refusal(s.renewLease(old, 5_000), 'stale_lease');
    await s.appendTranscript('s1', [{ kind: 'event', event: 'new-1' }], { lease: now });
    assert.deepEqual((await s.load('s1'))?.snapshot, { by: 'new' });
    const events = (await s.readTranscript('s1')).entries.map((e) => (e.kind === 'event' ? e.event : e.kind));
    assert.deepEqual(events, ['paused-1', 'new-1']);
  });

  it('ownership: a renewed lease outlives its first term', async () => {
    const s = owned();
    if (!s) return;
    const lease = await s.acquireLease('s1', { owner: 'a', leaseMs: 60 });
    const renewed = await s.renewLease(lease, 5_000);
    assert.equal(renewed.token, lease.token);
    await sleep(100);
    await refusal(s.acquireLease('s1', { owner: 'b', leaseMs: 5_000 }), 'in_use');
    await s.save({ id: 's1', state: 'AwaitingInput', snapshot: null }, { lease: renewed });
  });

  it('inbox: items in post order, a second answer to one approval refused, completion fenced', async () => {
    const s = store();
    if (!hasInbox(s) || !hasOwnership(s)) return;
    const m = await s.postInbox('new-session', { kind: 'message', text: 'hello' });
    assertMatches(m, { kind: 'message', text: 'hello', seq: 1 }, 'first item');
    const yes = await s.postInbox('new-session', { kind: 'approval', toolCallId: 'c1', approved: true });
    assert.ok((yes?.seq ?? 0) > 1, `second item seq ${yes?.seq} > 1`);
    assert.equal(
      await s.postInbox('new-session', { kind: 'approval', toolCallId: 'c1', approved: false }),
      undefined,
    );
    await s.postInbox('new-session', { kind: 'interrupt' });
    const items = await s.readInbox('new-session');
    assert.deepEqual(
      items.map((i) => i.kind),
      ['message', 'approval', 'interrupt'],
    );
    assertMatches(items[1], { approved: true, toolCallId: 'c1' }, 'approval item');
    const [lease] = await s.claimSessions({ owner: 'w1', leaseMs: 30, limit: 10 });
    assert.equal(lease?.sessionId, 'new-session');
    await s.completeInbox('new-session', [items[0]!.seq], { lease });
    assert.deepEqual(
      (await s.readInbox('new-session')).map((i) => i.kind),
      ['approval', 'interrupt'],
    );
    await sleep(60);
    const [next] = await s.claimSessions({ owner: 'w2', leaseMs: 5_000, limit: 10 });
    assert.ok((next?.token ?? 0) > lease!.token, `token ${next?.token} > ${lease!.token}`);
    await refusal(s.completeInbox('new-session', [items[1]!.seq], { lease }), 'stale_lease');
    assert.equal((await s.readInbox('new-session')).length, 2);
  });

  it('inbox: claims take sessions with items and no live lease, each by one claimant', async () => {
    const s = store();
    if (!hasInbox(s) || !hasOwnership(s)) return;
    assert.deepEqual(await s.claimSessions({ owner: 'w', leaseMs: 5_000, limit: 10 }), []);
    for (let i = 0; i < 12; i++) await s.postInbox(`s${i}`, { kind: 'message', text: `m${i}` });
    await s.acquireLease('s0', { owner: 'busy', leaseMs: 5_000 });
    await s.save({ id: 'idle', state: 'AwaitingInput', snapshot: null });
    const claims = await Promise.all(
      ['w1', 'w2', 'w3'].map((owner) => s.claimSessions({ owner, leaseMs: 5_000, limit: 5 })),
    );
    const ids = claims.flat().map((l: SessionLease) => l.sessionId);
    assert.equal(new Set(ids).size, ids.length, `each session claimed once: ${ids.join(', ')}`);
    assert.deepEqual(ids.sort(), Array.from({ length: 11 }, (_, i) => `s${i + 1}`).sort());
    assert.deepEqual(await s.claimSessions({ owner: 'w4', leaseMs: 5_000, limit: 5 }), []);
  });
}
