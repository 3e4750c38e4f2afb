import type { ServerResponse } from 'node:http';
import { HttpError } from '../http-error.js';
import { cancelReason } from '../run-cancel-inbox.js';
import { hasInbox, type SessionStore } from '../session-imports.js';
import { threadRecord } from '../thread-sessions.js';
import type { ActiveRuns } from './active-runs.js';
import { latestRun } from './thread-runs.js';

/**
 * `POST …/threads/<id>/runs/<runId>/cancel`: stops the run. Carried here, the agent is interrupted at
 * once; carried by another process sharing the store (or by none: its process died and a takeover will
 * go on with it), the cancel is posted to the session's inbox, naming the run, and the carrier
 * interrupts it when it hears it (run-cancel-inbox.ts). Either way the run ends `cancelled` (1.0
 * clients) and the answer is 202; a run that is not the thread's latest, or has ended, is a 404.
 */
export async function handleCancel(
  res: ServerResponse,
  threadId: string,
  runId: string,
  context: { store: SessionStore; principal: string; active: ActiveRuns },
): Promise<void> {
  const run = context.active.get(threadId);
  if (run?.agent && run.runId === runId) {
    // The run belongs to the caller only if the thread does (checked when it started, for its principal).
    const owner = run.agent.sessionRecord?.meta?.principal;
    if (owner !== undefined && owner !== context.principal) {
      throw new HttpError(403, 'thread_forbidden', `thread "${threadId}" belongs to another principal`);
    }
    run.cancelled = true;
    run.agent.interrupt('cancelled by the client');
    return accepted(res, runId, 'here');
  }
  const notFound = new HttpError(
    404,
    'run_not_found',
    `no run "${runId}" of thread "${threadId}" is running`,
  );
  const record = await threadRecord(context.store, threadId, context.principal);
  const { store } = context;
  if (!hasInbox(store)) throw notFound;
  const last = latestRun((await store.readTranscript(threadId)).entries);
  if (!last || last.runId !== runId || last.ended) throw notFound;
  if (!record && last.principal !== context.principal) {
    throw new HttpError(403, 'thread_forbidden', `thread "${threadId}" belongs to another principal`);
  }
  await store.postInbox(threadId, { kind: 'interrupt', reason: cancelReason(runId) });
  accepted(res, runId, 'inbox');
}

function accepted(res: ServerResponse, runId: string, via: 'here' | 'inbox'): void {
  res.writeHead(202, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ cancelled: runId, via }));
}
