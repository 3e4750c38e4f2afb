import type { AgentEvent, AgentEventType } from '../machines/emitted-events.js';
import type { Redactor, StreamRedactor } from './redact.js';

/** Events that may arrive while a model stream is still running, without ending it. */
const MID_STREAM: ReadonlySet<AgentEventType> = new Set([
  'tool_call_start',
  'tool_call_end',
  'tool_progress',
  'retry',
]);

/** Whether an event of this type ends a stream of `content_chunk`s (the held-back text is flushed before it). */
export function endsStream(type: AgentEventType): boolean {
  return !MID_STREAM.has(type);
}

/**
 * Puts the redactor between the machine and the bus: every event is published redacted.
 *
 * Streamed text needs care: a secret can be split across `content_chunk` deltas, where no single
 * delta shows it. Deltas go through a stream redactor that holds back what could be the start of a
 * secret; the held text is published (redacted) as one more `content_chunk` before the next event
 * that ends the stream (`usage`, `state_change`, ...), and dropped on `stream_reset` (the UI drops
 * the discarded stream's text anyway). Joining a turn's deltas still gives the whole answer, redacted.
 *
 * Events of a type nobody `hears` are neither redacted nor published: scanning a 1 KB tool result
 * that no one reads cost about 25 µs of the ~450 µs agentloop adds to a model call (bench/README.md).
 */
export function createEventRedaction(
  redactor: Redactor,
  publish: (event: AgentEvent) => void,
  hears: (type: AgentEventType) => boolean = () => true,
): (event: AgentEvent) => void {
  // Made when someone first reads streamed text: an agent nobody streams to never holds one.
  let stream: StreamRedactor | undefined;
  let lastChunk: AgentEvent<'content_chunk'> | undefined;
  return (event) => {
    if (event.type === 'content_chunk') {
      if (!hears('content_chunk')) return;
      lastChunk = event;
      stream ??= redactor.stream();
      const delta = stream.push(event.delta);
      if (delta) publish({ ...event, delta });
      return;
    }
    if (event.type === 'stream_reset') {
      stream?.discard();
      lastChunk = undefined;
    } else if (stream && lastChunk && endsStream(event.type)) {
      const rest = stream.flush();
      if (rest) publish({ ...lastChunk, delta: rest, timestamp: event.timestamp });
      lastChunk = undefined;
    }
    if (hears(event.type)) publish(redactor.redactValue(event));
  };
}
