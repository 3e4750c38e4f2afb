import { EventEmitter } from 'eventemitter3';
import type { AgentEvent, AgentEventType } from '../machines/emitted-events.js';

type Listeners = { [K in AgentEventType]: (event: AgentEvent<K>) => void } & {
  '*': (event: AgentEvent) => void;
};

/** The emitter's methods that add or remove listeners (`off` and `addListener` are aliases of their own). */
const LISTENER_CHANGES = [
  'on',
  'addListener',
  'once',
  'removeListener',
  'off',
  'removeAllListeners',
] as const;

/**
 * The typed event bus UIs listen on. Every event is delivered to its own type's listeners and to `'*'`.
 */
export class AgentEventBus extends EventEmitter<Listeners> {
  /**
   * Whether the bus has no listener at all, kept by every method that adds or removes one (a `once`
   * listener is removed through `removeListener` as it is called). The machine asks `hears` for each
   * event it could build, 80 times a 6-call session: two listener look-ups each when the bus is empty.
   */
  #empty = true;

  static {
    for (const name of LISTENER_CHANGES) {
      const change = EventEmitter.prototype[name] as (this: AgentEventBus, ...args: unknown[]) => unknown;
      Object.defineProperty(AgentEventBus.prototype, name, {
        configurable: true,
        writable: true,
        value(this: AgentEventBus, ...args: unknown[]) {
          const result = change.apply(this, args);
          this.#empty = this.eventNames().length === 0;
          return result;
        },
      });
    }
  }

  /** Whether anyone listens to `type` (directly or through `'*'`): unheard events need not be built. */
  hears(type: AgentEventType): boolean {
    if (this.#empty) return false;
    return this.listenerCount('*') > 0 || this.listenerCount(type) > 0;
  }

  /** Delivers one event to its type's listeners and to the wildcard listeners. */
  publish(event: AgentEvent): void {
    // eventemitter3's typed emit needs the exact key; the event's own type is that key.
    (this.emit as (type: string, event: AgentEvent) => boolean)(event.type, event);
    this.emit('*', event);
  }
}
