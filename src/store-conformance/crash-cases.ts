import assert from 'node:assert/strict';
import { hasOwnership } from '../session/session-lease.js';
import { toolCallLedger } from '../session/transcript.js';
import { assertMatches, refusal } from './check.js';
import { event, eventName, record, sleep } from './fixtures.js';
import type { StoreHandle, TestApi } from './test-api.js';

/**
 * What a process started after a crash finds: the store of the test stands for the crashed process
 * (never closed, leases never released), `store.reopen()` for the new one over the same data.
 */
export function crashCases({ it }: TestApi, store: StoreHandle): void {
  it('crash: a new process finds every save and append that returned, continues seq and keeps createdAt', async () => {
    const crashed = store();
    const first = await crashed.save(record('s1', { title: 'before the crash' }));
    await crashed.appendTranscript('s1', [event('a'), event('b')]);
    const saved = await crashed.save(record('s1', { title: 'before the crash', turns: 1 }));
    await crashed.appendTranscript('s1', [event('c')]);
    const after = await store.reopen();
    assert.deepEqual(await after.load('s1'), saved);
    assert.deepEqual(await after.readTranscript('s1'), await crashed.readTranscript('s1'));
    assert.deepEqual(
      (await after.list()).map((row) => row.id),
      ['s1'],
    );
    await after.appendTranscript('s1', [event('d')]);
    const again = await after.save(record('s1'));
    assert.equal(again.createdAt, first.createdAt);
    assert.equal(again.transcriptSeq, 4);
    assert.deepEqual(
      (await after.readTranscript('s1')).entries.map((e) => [e.seq, eventName(e)]),
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
      ],
    );
  });

  it('crash: a call started and never finished is still open after a crash, with its arguments and idempotency key', async () => {
    const crashed = store();
    await crashed.appendTranscript('s1', [
      {
        kind: 'tool_call_started',
        toolCallId: 'call_done',
        name: 'read',
        args: {},
        idempotencyKey: 's1:call_done',
      },
      {
        kind: 'tool_call_finished',
        toolCallId: 'call_done',
        name: 'read',
        result: 'ok',
        isError: false,
        durationMs: 1,
      },
      {
        kind: 'tool_call_started',
        toolCallId: 'call_cut',
        name: 'charge_card',
        args: { amount: 7 },
        idempotencyKey: 's1:call_cut',
      },
    ]);
    const after = await store.reopen();
    const { entries } = await after.readTranscript('s1');
    const ledger = toolCallLedger(entries);
    assert.equal(ledger.get('call_done')?.status, 'completed');
    assertMatches(
      ledger.get('call_cut'),
      { status: 'started-no-result', args: { amount: 7 } },
      'cut-off call',
    );
    assertMatches(entries.at(-1), { toolCallId: 'call_cut', idempotencyKey: 's1:call_cut' }, 'last entry');
  });

  it("crash: a crashed owner's lease holds until it lapses; then the next owner gets a higher token and the crashed owner's late writes are refused", async () => {
    const crashed = store();
    if (!hasOwnership(crashed)) return;
    // Opened first: opening may take longer than the lease (connections, migrations).
    const after = await store.reopen();
    if (!hasOwnership(after)) assert.fail('the reopened store has no acquireLease, the first one has');
    const old = await crashed.acquireLease('s1', { owner: 'crashed', leaseMs: 500 });
    await crashed.save(record('s1', { snapshot: { by: 'crashed' } }), { lease: old });
    await refusal(after.acquireLease('s1', { owner: 'next', leaseMs: 5_000 }), 'in_use');
    await sleep(old.expiresAt - Date.now() + 50);
    const next = await after.acquireLease('s1', { owner: 'next', leaseMs: 5_000 });
    assert.ok(next.token > old.token, `token ${next.token} > ${old.token}`);
    await after.save(record('s1', { snapshot: { by: 'next' } }), { lease: next });
    // The crashed process was only paused: what it writes now must not land.
    await refusal(crashed.save(record('s1', { snapshot: { by: 'late' } }), { lease: old }), 'stale_lease');
    await refusal(crashed.appendTranscript('s1', [event('late')], { lease: old }), 'stale_lease');
    assert.deepEqual((await after.load('s1'))?.snapshot, { by: 'next' });
    assert.deepEqual((await after.readTranscript('s1')).entries, []);
  });
}
