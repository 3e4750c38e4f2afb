import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { SessionStore } from '../session-imports.js';
import { threadRecord } from '../thread-sessions.js';
import { tasksFromTranscript, withHistory } from './task-entries.js';

/**
 * `ListTasks`: the caller's tasks, in one context or in every session of the store, newest status
 * first, filtered by state, a page at a time (the page token is an offset this server gave).
 */
export async function listTasks(
  store: SessionStore,
  params: ListTasksRequest,
  principal: string,
): Promise<ListTasksResponse> {
  const contexts = params.contextId
    ? [params.contextId]
    : (await store.list()).flatMap((s) => ('error' in s && s.error ? [] : [s.id]));
  const found: Task[] = [];
  for (const id of contexts) {
    const record = await threadRecord(store, id, principal).catch(() => null);
    if (record === null) continue;
    const { entries } = await store.readTranscript(id);
    for (const task of tasksFromTranscript(id, entries).values()) {
      if (task.principal !== principal) continue;
      if (params.status && task.task.status?.state !== params.status) continue;
      found.push(task.task);
    }
  }
  found.sort((a, b) => (b.status?.timestamp ?? '').localeCompare(a.status?.timestamp ?? ''));
  const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
  const offset = params.pageToken ? Number.parseInt(params.pageToken, 10) : 0;
  if (!Number.isInteger(offset) || offset < 0)
    throw new RequestMalformedError('pageToken is not one this server gave');
  const page = found.slice(offset, offset + pageSize).map((task) => {
    const copy = withHistory(task, params.historyLength ?? undefined);
    if (!params.includeArtifacts) copy.artifacts = [];
    return copy;
  });
  return {
    tasks: page,
    nextPageToken: offset + pageSize < found.length ? String(offset + pageSize) : '',
    pageSize,
    totalSize: found.length,
  };
}
