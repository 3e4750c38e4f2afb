// XState inspection events as the page receives them: sanitized records in the shape
// `@statelyai/inspect` sends, read from the events' public fields only.
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { InspectionRecord } from './protocol.js';
import { type Sanitizer, sanitizeAgentContext } from './sanitize.js';

/** The sanitizers of the session an event belongs to. */
export interface RecordSanitizers {
  /** For contexts. */
  sanitize: Sanitizer;
  /** For events: conversations in them become counts (the transcript channel carries them). */
  sanitizeEvent: Sanitizer;
}

/** Whether an event is about the root actor (the agent's machine), not an actor it invoked. */
export function isRootActorEvent(event: InspectionEvent): boolean {
  return event.actorRef.sessionId === event.rootId;
}

/**
 * The actors started in `events`, each mapped to the actor that started it. XState reports an
 * actor's start as an `@xstate.event` carrying `xstate.init` whose `sourceRef` is its parent; it
 * comes right after the actor's `@xstate.actor` event, in the same synchronous step (so in the same
 * batch).
 */
export function parentsOf(events: Iterable<InspectionEvent>): Map<string, string> {
  const parents = new Map<string, string>();
  for (const event of events) {
    if (event.type !== '@xstate.event' || event.event.type !== 'xstate.init') continue;
    if (event.sourceRef) parents.set(event.actorRef.sessionId, event.sourceRef.sessionId);
  }
  return parents;
}

/**
 * One inspection event as a record for the page, or undefined for the kinds the page does not use.
 * Only root snapshots carry the state value, and only with `withContext` the (sanitized) context;
 * `parentId` is the actor that started an `@xstate.actor` event's actor (see {@link parentsOf}).
 */
export function inspectionRecord(
  event: InspectionEvent,
  at: number,
  sanitizers: RecordSanitizers,
  options: { withContext: boolean; parentId?: string | undefined },
): InspectionRecord | undefined {
  const base = { sessionId: event.actorRef.sessionId, rootId: event.rootId, createdAt: at };
  switch (event.type) {
    case '@xstate.actor': {
      const record: InspectionRecord = {
        ...base,
        type: '@xstate.actor',
        name: (event.actorRef as AnyActorRef).id,
        snapshot: { status: 'active' },
      };
      if (options.parentId) record.parentId = options.parentId;
      return record;
    }
    case '@xstate.event': {
      const record: InspectionRecord = {
        ...base,
        type: '@xstate.event',
        event: sanitizers.sanitizeEvent(event.event),
      };
      const source = event.sourceRef?.sessionId;
      if (source) record.sourceId = source;
      return record;
    }
    case '@xstate.snapshot': {
      const snap = event.snapshot as unknown as { status?: string; value?: unknown; context?: unknown };
      const isRoot = isRootActorEvent(event);
      const snapshot: NonNullable<InspectionRecord['snapshot']> = {};
      if (snap.status) snapshot.status = snap.status;
      if (isRoot) snapshot.value = snap.value;
      if (isRoot && options.withContext)
        snapshot.context = sanitizeAgentContext(snap.context, sanitizers.sanitize, { lastMessages: 0 });
      return {
        ...base,
        type: '@xstate.snapshot',
        event: { type: (event.event as { type: string }).type },
        snapshot,
      };
    }
    default:
      return undefined;
  }
}
