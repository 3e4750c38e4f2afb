import { randomUUID } from 'node:crypto';
import type { StreamResponse } from '@a2a-js/sdk';
import { type SendMessageRequest, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type {
  PushNotificationSender,
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { appendAsWriter } from '../entry-for-writer.js';
import type { SessionStore } from '../session-imports.js';
import type { TranscriptFeed } from '../transcript-feed.js';
import { TASK_PUSH_ENTRY, type TaskRecord } from './task-entries.js';
import { endsStream } from './task-views.js';

/** Where push notifications may go. */
export interface PushOptions {
  /** Hosts (`host` or `host:port`) a push notification URL may name; any other is refused. */
  allowedHosts: readonly string[];
}

/**
 * The SDK's push sender (1.0 and 0.3 bodies, by the version each config was set in) over the push
 * configs of the task records in `records` (kept in the transcript; the handler puts a task's record
 * here before it sends).
 */
export function pushSender(records: ReadonlyMap<string, TaskRecord>): PushNotificationSender {
  const store: PushNotificationStore = {
    save: async () => {},
    delete: async () => {},
    load: async (taskId) => [...(records.get(taskId)?.push.values() ?? [])].map((p) => pushConfig(p.config)),
    loadWithMetadata: async (taskId): Promise<StoredPushNotificationConfig[]> =>
      [...(records.get(taskId)?.push.values() ?? [])].map((p) => ({
        config: pushConfig(p.config),
        wireVersion: p.wireVersion,
      })),
  };
  return createLegacyAwarePushNotificationSender(store, { timeout: 5000 });
}

/** A push config from its kept JSON. */
export function pushConfig(json: unknown): TaskPushNotificationConfig {
  return TaskPushNotificationConfig.fromJSON(json);
}

/** Refuses a push URL that is not http(s) or names a host outside `allowed`. */
export function checkPushUrl(url: string, allowed: readonly string[]): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RequestMalformedError(`push notification url ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new RequestMalformedError(`push notification url must be http or https, not ${parsed.protocol}`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!allowed.includes(host) && !allowed.includes(parsed.host)) {
    throw new RequestMalformedError(
      `push notification url host "${parsed.host}" is not an allowed host (allowed: ${allowed.join(', ') || 'none'})`,
    );
  }
}

/** The push config a send carries, checked (refused when push is off or its host not allowed). */
export function pushGiven(
  params: SendMessageRequest,
  push: PushOptions | undefined,
  requestedVersion: string,
): { config: Record<string, unknown>; wireVersion: string } | undefined {
  const given = params.configuration?.taskPushNotificationConfig;
  if (!given?.url) return undefined;
  if (!push) throw new PushNotificationNotSupportedError('this server sends no push notifications');
  checkPushUrl(given.url, push.allowedHosts);
  const config = TaskPushNotificationConfig.toJSON({ ...given, id: given.id || randomUUID() });
  return { config: config as Record<string, unknown>, wireVersion: requestedVersion || '0.3' };
}

/**
 * Sends a turn's kept events to the task's push configs known when each event is kept (a config set
 * in another process comes through the session's inbox and is written by the carrier, so its record
 * has it from then on).
 */
export class TaskPushNotifier {
  /** The records of the tasks being notified, for the sender's config lookups. */
  readonly #records = new Map<string, TaskRecord>();
  readonly #sender: PushNotificationSender = pushSender(this.#records);

  /** The `onKept` of one turn (the call context: the protocol version the sender answers in). */
  forTurn(context: ServerCallContext): (event: StreamResponse, record: TaskRecord) => void {
    return (event, record) => {
      const taskId = record.task.id;
      const last = endsStream(event);
      this.#records.set(taskId, record);
      const send = async () => {
        if ((this.#records.get(taskId)?.push.size ?? 0) > 0)
          await this.#sender.send(event, context, record.task);
      };
      void send()
        .catch(() => {})
        .finally(() => {
          if (last) this.#records.delete(taskId);
        });
    };
  }
}

/** How long a push config set for a task another process carries waits for that process to write it (ms). */
const PUSH_WAIT_MS = 10_000;

/**
 * Writes a push entry (a config set, or deleted) by the session's one writer: through `feed`, the
 * running turn's, when this process carries the context; else here under the session's lease when
 * nobody carries it, or through the session's inbox by the process that does (entry-for-writer.ts).
 */
export async function writePushEntry(
  store: SessionStore,
  feed: TranscriptFeed | undefined,
  contextId: string,
  data: Record<string, unknown>,
  pollMs: number,
): Promise<void> {
  if (feed) {
    await feed.append([{ kind: 'event', event: TASK_PUSH_ENTRY, data }]);
    return;
  }
  const entry = { event: TASK_PUSH_ENTRY, data };
  const outcome = await appendAsWriter(store, contextId, entry, { pollMs, waitMs: PUSH_WAIT_MS });
  if (outcome === 'no-inbox') {
    throw new UnsupportedOperationError(
      `context "${contextId}" is running in another process, and this store has no inbox to reach it through`,
    );
  }
  if (outcome === 'not-taken') {
    throw new UnsupportedOperationError(
      `the process carrying context "${contextId}" did not take the push config in ${PUSH_WAIT_MS / 1000} s; nothing was changed`,
    );
  }
}
