// Recording what attached agents do and sending it to the pages in batches: XState inspection
// events and bus events are queued as references and serialized only when a page is open.
import type { InspectionEvent, Observer } from 'xstate';
import type { AgentEvent } from '../machines/emitted-events.js';
import { inspectionRecord, isRootActorEvent, parentsOf } from './inspection-record.js';
import { type LiveSession, liveStatus, snapshotOf } from './live-session.js';
import type { PageConnections } from './page-connections.js';
import type { BatchItem, BusEvent } from './protocol.js';
import { isTokenChunkEvent } from './sanitize.js';
import type { TrackedSessions } from './tracked-sessions.js';

/** Options of an {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** How long events are gathered before they are sent together. */
  flushMs: number;
  /** Bus events kept per session for pages that connect later. */
  historyLimit: number;
}

interface Queued {
  seq: number;
  session: LiveSession;
  item: { k: 'inspect'; event: InspectionEvent; at: number } | { k: 'bus'; event: AgentEvent };
}

/**
 * Keeps each session's bus history and, while a page is open, queues the sessions' events and sends
 * them every `flushMs` in one `batch` message: each event sanitized and serialized once for all
 * pages, token chunks joined into one `stream` item, the conversation as appended `messages`, and
 * the status of every session that changed.
 */
export class EventRecorder {
  readonly #sessions: TrackedSessions;
  readonly #pages: PageConnections;
  readonly #options: EventRecorderOptions;
  #queue: Queued[] = [];
  #seq = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(sessions: TrackedSessions, pages: PageConnections, options: EventRecorderOptions) {
    this.#sessions = sessions;
    this.#pages = pages;
    this.#options = options;
  }

  /** The XState inspection observer of every attached agent. With no page open it returns at once. */
  readonly inspect: Observer<InspectionEvent> = {
    next: (event) => {
      if (this.#pages.count === 0) return;
      const session = this.#sessions.forRootActor(event.rootId);
      if (!session?.attached) return;
      if (
        (event.type === '@xstate.event' || event.type === '@xstate.snapshot') &&
        isTokenChunkEvent(event.event)
      )
        return;
      this.#enqueue(session, { k: 'inspect', event, at: Date.now() });
    },
  };

  /** The sequence number the next queued event gets. */
  get nextSeq(): number {
    return this.#seq;
  }

  /** Records the session's bus events (until it is detached). Returns the function that stops it. */
  follow(session: LiveSession): () => void {
    return session.agent.on('*', (event) => {
      if (!session.attached) return;
      if (event.type === 'content_chunk') {
        if (this.#pages.count === 0) return;
        session.stream += event.delta;
        session.dirty = true;
        this.#schedule();
        return;
      }
      session.history.push(event);
      if (session.history.length > this.#options.historyLimit)
        session.history.splice(0, session.history.length - this.#options.historyLimit);
      if (this.#pages.count > 0) this.#enqueue(session, { k: 'bus', event });
    });
  }

  /** Sends what is queued now (with no page open: drops it). */
  flush(): void {
    this.#timer = undefined;
    const items = this.#queue;
    this.#queue = [];
    if (this.#pages.count === 0) {
      for (const session of this.#sessions.live()) session.stream = '';
      return;
    }
    const out = this.#serialize(items);
    const tail = this.#changes();
    for (const page of this.#pages) {
      const parts = out.filter((o) => o.seq >= page.fromSeq).map((o) => o.json);
      parts.push(...tail);
      if (parts.length > 0) this.#pages.send(page, `{"t":"batch","items":[${parts.join(',')}]}`);
    }
  }

  /** Stops the timer (nothing more is sent). */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The queued events as batch items, each serialized once. */
  #serialize(items: Queued[]): { seq: number; json: string }[] {
    // The last root snapshot of each session in the batch carries the (sanitized) context.
    const lastSnapshot = new Map<LiveSession, number>();
    items.forEach((q, i) => {
      if (
        q.item.k === 'inspect' &&
        q.item.event.type === '@xstate.snapshot' &&
        isRootActorEvent(q.item.event)
      )
        lastSnapshot.set(q.session, i);
    });
    const parents = parentsOf(items.flatMap((q) => (q.item.k === 'inspect' ? [q.item.event] : [])));
    const out: { seq: number; json: string }[] = [];
    items.forEach((q, i) => {
      let item: BatchItem | undefined;
      if (q.item.k === 'bus') {
        item = { k: 'bus', session: q.session.id, event: q.session.sanitize(q.item.event) as BusEvent };
      } else {
        const record = inspectionRecord(q.item.event, q.item.at, q.session, {
          withContext: lastSnapshot.get(q.session) === i,
          parentId: parents.get(q.item.event.actorRef.sessionId),
        });
        if (record) item = { k: 'inspect', session: q.session.id, event: record };
      }
      if (item) out.push({ seq: q.seq, json: JSON.stringify(item) });
    });
    return out;
  }

  /** Appended messages, streamed text and the status of every session that changed, serialized. */
  #changes(): string[] {
    const tail: string[] = [];
    for (const session of this.#sessions.live()) {
      if (!session.dirty) continue;
      session.dirty = false;
      // Streamed text first: the messages that follow replace it.
      if (session.stream) {
        tail.push(
          JSON.stringify({
            k: 'stream',
            session: session.id,
            text: session.sanitize(session.stream) as string,
          } satisfies BatchItem),
        );
        session.stream = '';
      }
      const messages = snapshotOf(session)?.context?.messages ?? [];
      if (messages.length !== session.sentMessages) {
        const from = messages.length < session.sentMessages ? 0 : session.sentMessages;
        tail.push(
          JSON.stringify({
            k: 'messages',
            session: session.id,
            from,
            items: session.sanitize(messages.slice(from)) as unknown[],
          } satisfies BatchItem),
        );
        session.sentMessages = messages.length;
      }
      tail.push(
        JSON.stringify({ k: 'status', session: session.id, status: liveStatus(session) } satisfies BatchItem),
      );
    }
    return tail;
  }

  #enqueue(session: LiveSession, item: Queued['item']): void {
    this.#queue.push({ seq: this.#seq++, session, item });
    session.dirty = true;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer === undefined) this.#timer = setTimeout(() => this.flush(), this.#options.flushMs);
  }
}
