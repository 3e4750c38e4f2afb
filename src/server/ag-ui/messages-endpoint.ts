import type { ServerResponse } from 'node:http';
import { scrubForClient } from '../client-text.js';
import { HttpError } from '../http-error.js';
import type { SessionStore } from '../session-imports.js';
import { threadRecord } from '../thread-sessions.js';
import { messagesSnapshot } from './messages-snapshot.js';

/**
 * `GET …/threads/<id>/messages`: the thread's conversation as its transcript holds it, as one AG-UI `MESSAGES_SNAPSHOT`
 * event in JSON (a page loading a thread it did not run; a run asks for the same event in its stream
 * with `forwardedProps: { messagesSnapshot: true }`). Read from the store: any process answers.
 */
export async function handleMessages(
  res: ServerResponse,
  threadId: string,
  context: { store: SessionStore; principal: string },
): Promise<void> {
  const record = await threadRecord(context.store, threadId, context.principal);
  if (!record) throw new HttpError(404, 'thread_not_found', `no saved thread "${threadId}"`);
  // The transcript's messages (as redacted when written), placed as the run events name them.
  const { entries } = await context.store.readTranscript(threadId);
  const messages = entries.flatMap((entry) => (entry.kind === 'message' ? [entry.message] : []));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(messagesSnapshot(messages, (text) => scrubForClient(text))));
}
