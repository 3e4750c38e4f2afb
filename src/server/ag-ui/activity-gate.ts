import { type BaseEvent, EventType } from '@ag-ui/core';

/**
 * Holds a tool's progress (`ACTIVITY_SNAPSHOT`, live from the bus) until its call was announced
 * (`TOOL_CALL_START`, sent once the assistant message is durable): a tool may report before the
 * message that made its call is written, and a client must not hear of a call's progress before the
 * call. Everything else passes at once.
 */
export class ActivityGate {
  readonly #held = new Map<string, BaseEvent[]>();
  readonly #knows: (toolCallId: string) => boolean;
  readonly #send: (event: BaseEvent) => void;

  constructor(knows: (toolCallId: string) => boolean, send: (event: BaseEvent) => void) {
    this.#knows = knows;
    this.#send = send;
  }

  /** Sends `event`, or holds it when it is the progress of a call not announced yet. */
  send(event: BaseEvent): void {
    const callId = progressCallId(event);
    if (callId === undefined || this.#knows(callId)) {
      this.#send(event);
      return;
    }
    const held = this.#held.get(callId);
    if (held) held.push(event);
    else this.#held.set(callId, [event]);
  }

  /** Sends what waited for the calls that are known now (call after the durable events went out). */
  release(): void {
    for (const [callId, events] of this.#held) {
      if (!this.#knows(callId)) continue;
      this.#held.delete(callId);
      for (const event of events) this.#send(event);
    }
  }
}

function progressCallId(event: BaseEvent): string | undefined {
  if (event.type !== EventType.ACTIVITY_SNAPSHOT) return undefined;
  const content = (event as { content?: { toolCallId?: unknown } }).content;
  return typeof content?.toolCallId === 'string' ? content.toolCallId : undefined;
}
