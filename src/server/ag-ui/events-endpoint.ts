import type { IncomingMessage, ServerResponse } from 'node:http';
import { scrubForClient } from '../client-text.js';
import { HttpError } from '../http-error.js';
import type { SessionStore, TranscriptEntry } from '../session-imports.js';
import { type ThreadContext, threadRecord } from '../thread-sessions.js';
import type { ActiveRuns } from './active-runs.js';
import { EventStream } from './event-stream.js';
import { type TakeoverOptions, takeOverRun } from './run-takeover.js';
import { RUN_ENDED_ENTRY, RUN_STARTED_ENTRY, TranscriptMapping } from './transcript-events.js';

export interface EventsOptions {
  store: SessionStore;
  principal: string;
  active: ActiveRuns;
  maxBuffered: number;
  /** How often the transcript is read again while the run is carried by another process (ms). */
  pollMs: number;
  /** What taking over a run whose process died needs (without it, the stream only waits). */
  takeover?: { context: ThreadContext } & TakeoverOptions;
}

/**
 * `GET …/threads/<id>/events`: the thread's latest run from the client's `Last-Event-ID` on (every
 * event after that transcript seq; the whole run without one), then its events as they are written,
 * until it ends. Works on any process sharing the store: the run's own process hears its transcript
 * as it is written; any other reads it again every `pollMs`, and takes the run over when the process
 * carrying it died (run-takeover.ts). Text is sent whole, once kept.
 */
export async function handleEvents(
  req: IncomingMessage,
  res: ServerResponse,
  threadId: string,
  options: EventsOptions,
): Promise<void> {
  // A thread's first run has no saved record yet: its start entry names the principal then.
  const record = await threadRecord(options.store, threadId, options.principal);
  const after = lastEventId(req);
  // Heard as written only when this process carries the run with its feed (not while it tries a takeover).
  const carried = options.active.get(threadId);
  const local = carried?.feed ? carried : undefined;
  const heard: TranscriptEntry[] = [];
  let wake = () => {};
  const stopHearing = local?.feed?.listen((entries) => {
    heard.push(...entries);
    wake();
  });
  try {
    const { entries } = await options.store.readTranscript(threadId);
    const start = entries.findLastIndex((e) => e.kind === 'event' && e.event === RUN_STARTED_ENTRY);
    if (start < 0) throw new HttpError(404, 'thread_not_found', `no thread "${threadId}" with a run`);
    const { runId, principal } =
      (entries[start] as { data?: { runId?: string; principal?: string } }).data ?? {};
    if (!record && principal !== options.principal) {
      throw new HttpError(403, 'thread_forbidden', `thread "${threadId}" belongs to another principal`);
    }
    const mapping = new TranscriptMapping(threadId, (text) => scrubForClient(text));
    mapping.learn(entries.slice(0, start));
    const stream = new EventStream(req, res, options.maxBuffered);
    let sent = 0;
    let ended = false;
    const send = (entry: TranscriptEntry) => {
      if (entry.seq <= sent || ended) return;
      const events = mapping.events(entry);
      sent = entry.seq;
      const first = entry.kind === 'event' && entry.event === RUN_STARTED_ENTRY;
      // The run's start goes out even when the client has it (a stream opens with RUN_STARTED), without an id then.
      if (entry.seq <= after) {
        if (first) for (const event of events) stream.send(event);
        return;
      }
      if (events.length > 0) stream.sendGroup(events, entry.seq);
      ended =
        entry.kind === 'event' &&
        entry.event === RUN_ENDED_ENTRY &&
        (entry.data as { runId?: string }).runId === runId;
    };
    for (const entry of entries.slice(start)) send(entry);
    while (!ended && stream.open) {
      if (local && options.active.get(threadId) === local) {
        for (const entry of heard.splice(0)) send(entry);
        if (ended) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, options.pollMs);
        });
      } else {
        for (const entry of heard.splice(0)) send(entry);
        if (ended) break;
        // Carried by no live process (its lease lapsed): this one goes on with it.
        if (options.takeover && !options.active.has(threadId)) {
          await takeOverRun(options.takeover.context, threadId, options.takeover).catch(() => 'none');
        }
        await new Promise((resolve) => setTimeout(resolve, options.pollMs));
        const again = await options.store.readTranscript(threadId);
        for (const entry of again.entries) if (entry.seq > sent) send(entry);
      }
    }
    // The stream ends once this process (when it carries the run) has let the session go, as a run's
    // own response does: the client's next run finds the thread at rest, not busy.
    const carrier = options.active.get(threadId);
    if (ended && carrier && carrier.runId === runId) await carrier.done;
    stream.end();
  } finally {
    stopHearing?.();
  }
}

/** The seq the client saw last: the `Last-Event-ID` header or `?lastEventId=` (0 for none). */
function lastEventId(req: IncomingMessage): number {
  const header = req.headers['last-event-id'];
  const query = new URL(req.url ?? '/', 'http://x').searchParams.get('lastEventId');
  const value = Number(typeof header === 'string' ? header : (query ?? '0'));
  if (!Number.isInteger(value) || value < 0) {
    throw new HttpError(400, 'bad_input', 'Last-Event-ID must be a transcript seq (a whole number)');
  }
  return value;
}
