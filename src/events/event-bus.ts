import { EventEmitter } from 'eventemitter3';
import type { AgentEvent, AgentEventType } from '../machines/emitted-events.js';

type Listeners = { [K in AgentEventType]: (event: AgentEvent<K>) => void } & {
  '*': (event: AgentEvent) => void;
};

/**
 * The typed event bus UIs listen on. Every event is delivered to its own type's listeners and to `'*'`.
 */
export class AgentEventBus extends EventEmitter<Listeners> {
  /** Whether anyone listens to `type` (directly or through `'*'`): unheard events need not be built. */
  hears(type: AgentEventType): boolean {
    return this.listenerCount('*') > 0 || this.listenerCount(type) > 0;
  }

  /** Delivers one event to its type's listeners and to the wildcard listeners. */
  publish(event: AgentEvent): void {
    // eventemitter3's typed emit needs the exact key; the event's own type is that key.
    (this.emit as (type: string, event: AgentEvent) => boolean)(event.type, event);
    this.emit('*', event);
  }
}
