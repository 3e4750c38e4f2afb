import type { StreamResponse } from '@a2a-js/sdk';
import type { SessionStore } from '../session-imports.js';
import type { TranscriptFeed } from '../transcript-feed.js';
import { followTranscript } from '../transcript-follow.js';
import { applyEntry, type TaskRecord } from './task-entries.js';
import { endsStream } from './task-views.js';

/**
 * A task's kept events from the transcript's start, then as they are written, until the task ends or
 * waits for input: through the carrying process's `feed` when it is this one, else by reading the
 * transcript again every `pollMs` (any process sharing the store).
 */
export async function* followTask(
  taskId: string,
  contextId: string,
  options: { store: SessionStore; pollMs: number; feed?: TranscriptFeed; local?: () => boolean },
): AsyncGenerator<StreamResponse, void, undefined> {
  const tasks = new Map<string, TaskRecord>();
  for await (const entry of followTranscript({ ...options, sessionId: contextId, after: 0 })) {
    const before = tasks.get(taskId)?.events.length ?? 0;
    applyEntry(tasks, contextId, entry);
    const now = tasks.get(taskId);
    if (!now) continue;
    for (const { event } of now.events.slice(before)) {
      yield event;
      if (endsStream(event)) return;
    }
  }
}
