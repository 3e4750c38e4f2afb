import { describe, expect, it } from 'vitest';
import { postRun, slowRunServer } from './support/ag-ui-server.js';
import { waitUntil } from './support/wait-until.js';

// A run hears interrupts posted to its session's inbox (how a cancel from another process arrives);
// interrupts left from before it started are completed without effect.

/** Resolves once the thread's inbox holds nothing (items are completed just after they are seen). */
const inboxEmpties = (store: { readInbox(id: string): Promise<unknown[]> }, id: string) =>
  waitUntil(async () => (await store.readInbox(id)).length === 0, `the inbox of ${id} to be completed`);

const input = (threadId: string, runId: string, text: string) => ({
  threadId,
  runId,
  protocolVersion: '1.0',
  messages: [{ id: `u-${runId}`, role: 'user', content: text }],
});

describe('cancels through the session inbox', () => {
  it('an interrupt posted while the run goes on (as `agentloop send --interrupt` posts it) ends it cancelled', async () => {
    const { runs, store, started } = await slowRunServer('never', { pollMs: 20 });
    const running = postRun(runs, input('t-inbox', 'r1', 'go'));
    await started;
    await store.postInbox('t-inbox', { kind: 'interrupt' });
    const { events } = await running;
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    await inboxEmpties(store, 't-inbox'); // applied once, completed
  });

  it('an interrupt left from before the run, or naming another run, does not stop it', async () => {
    const { runs, store, started, release } = await slowRunServer('Done.', { pollMs: 20 });
    await store.postInbox('t-stale', { kind: 'interrupt' });
    await store.postInbox('t-stale', { kind: 'interrupt', reason: 'cancelled by the client (run "old")' });
    const running = postRun(runs, input('t-stale', 'r1', 'hi'));
    await started;
    await inboxEmpties(store, 't-stale'); // seen by the run, and completed
    release();
    const { events } = await running;
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: 'Done.' });
  });
});
