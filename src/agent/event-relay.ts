import type { Actor } from 'xstate';
import type { AgentEventBus } from '../events/event-bus.js';
import { createEventRedaction, endsStream } from '../events/event-redaction.js';
import type { Redactor } from '../events/redact.js';
import type { AgentMachine } from '../machines/agent-machine.js';
import type { AgentEvent, AgentEventType } from '../machines/emitted-events.js';
import { workCounts } from '../work-counters.js';

/**
 * Relays the machine's emitted events to the bus, redacted; `onEvent` sees each event as emitted
 * (the agent settles a turn on `turn_end`).
 */
export function relayEvents(
  actor: Actor<AgentMachine>,
  bus: AgentEventBus,
  redactor: Redactor,
  onEvent: (event: AgentEvent) => void,
): void {
  const publish = createEventRedaction(
    redactor,
    (event) => bus.publish(event),
    (type) => bus.hears(type),
  );
  actor.on('*', (event) => {
    publish(withoutRequestSettings(event, bus));
    onEvent(event);
  });
}

/**
 * A `model_call` event without its request settings (tool schemas and all): the saved session, which
 * hears the actor itself, records them when they change; listeners and audit logs get the call's
 * record as before, not the schemas at every call.
 */
function withoutRequestSettings(event: AgentEvent, bus: AgentEventBus): AgentEvent {
  if (event.type !== 'model_call' || event.settings === undefined || !bus.hears('model_call')) return event;
  workCounts.events++;
  const { settings: _settings, ...rest } = event;
  return rest;
}

/**
 * Which emitted events the machine must build for an agent: those the bus hears, `turn_end` (the agent
 * itself waits for it), `model_call` when the session is saved (`recordsModelCalls`: its transcript
 * records one per model call, with the request's hash), and, while someone reads `content_chunk`,
 * every event that ends a stream (the redaction flushes the held-back end of the text before it).
 * An agent nobody listens to builds no `model_call` event, so its request is never hashed.
 */
export function eventsHeard(
  bus: AgentEventBus,
  recordsModelCalls: boolean,
): (type: AgentEventType) => boolean {
  return (type) =>
    type === 'turn_end' ||
    (type === 'model_call' && recordsModelCalls) ||
    bus.hears(type) ||
    (type !== 'content_chunk' && endsStream(type) && bus.hears('content_chunk'));
}

/** Listens on the bus for one event type, or `'*'` for all; returns a function that stops listening. */
export function listen(bus: AgentEventBus, type: string, listener: (event: unknown) => void): () => void {
  const b = bus as unknown as {
    on(t: string, l: (e: unknown) => void): void;
    off(t: string, l: (e: unknown) => void): void;
  };
  b.on(type, listener);
  return () => b.off(type, listener);
}

/** An `error` event the machine does not emit itself, at the turn and iteration the actor is at (0 before it starts). */
export function errorEvent(
  actor: Actor<AgentMachine> | undefined,
  sessionId: string,
  message: string,
  code: string,
): AgentEvent<'error'> {
  const context = actor?.getSnapshot().context;
  const at = { turn: context?.turn ?? 0, iteration: context?.iteration ?? 0, timestamp: Date.now() };
  return { type: 'error', sessionId, ...at, message, code };
}
