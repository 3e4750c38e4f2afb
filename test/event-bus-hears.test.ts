/**
 * `AgentEventBus.hears`: whether anyone listens to a type, asked for every event the machine could
 * build. It keeps "no listener at all" as a flag that every way of adding or removing a listener
 * updates (a `once` listener leaves as it is called), so an agent nobody listens to answers without
 * looking listeners up (bench/README.md, llm36).
 */
import { EventEmitter } from 'eventemitter3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentEventBus } from '../src/events/event-bus.js';
import type { AgentEvent } from '../src/machines/emitted-events.js';

const usage = { type: 'usage', sessionId: 's', turn: 1, iteration: 1, timestamp: 0 } as unknown as AgentEvent;

describe('AgentEventBus.hears', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('follows every way a listener comes and goes', () => {
    const bus = new AgentEventBus();
    const listener = () => {};
    expect(bus.hears('usage')).toBe(false);
    bus.on('usage', listener);
    expect([bus.hears('usage'), bus.hears('turn_end')]).toEqual([true, false]);
    bus.off('usage', listener);
    expect(bus.hears('usage')).toBe(false);
    bus.addListener('*', listener);
    expect([bus.hears('usage'), bus.hears('turn_end')]).toEqual([true, true]);
    bus.removeListener('*', listener);
    expect(bus.hears('turn_end')).toBe(false);
    bus.on('usage', listener);
    bus.on('turn_end', listener);
    bus.removeAllListeners('usage');
    expect([bus.hears('usage'), bus.hears('turn_end')]).toEqual([false, true]);
    bus.removeAllListeners();
    expect(bus.hears('turn_end')).toBe(false);
  });

  it('a once listener is heard until it is called, then the bus is empty again', () => {
    const bus = new AgentEventBus();
    const heard: string[] = [];
    bus.once('usage', (e) => heard.push(e.type));
    expect(bus.hears('usage')).toBe(true);
    bus.publish(usage);
    bus.publish(usage);
    expect(heard).toEqual(['usage']);
    expect(bus.hears('usage')).toBe(false);
  });

  it('an empty bus answers without looking listeners up; one with a listener looks them up', () => {
    const bus = new AgentEventBus();
    const lookups = vi.spyOn(EventEmitter.prototype, 'listenerCount');
    for (let i = 0; i < 10; i++) bus.hears('usage');
    expect(lookups).not.toHaveBeenCalled();
    bus.on('turn_end', () => {});
    expect(bus.hears('usage')).toBe(false);
    expect(lookups).toHaveBeenCalledTimes(2);
  });
});
