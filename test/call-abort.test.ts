/**
 * What stops one model call (src/llm/call-abort.ts): the caller's stop notice or signal, and the
 * deadline, each aborting the running attempt's controller, the one controller the call makes.
 * The calls over HTTP are in model-call.test.ts; these are the rules between the sources.
 */
import { describe, expect, it } from 'vitest';
import { CallAbort, DeadlineExceededError, type StopNotice, signalOf } from '../src/llm/call-abort.js';

/** A stop notice the test stops by hand (an effect's `EffectIO` is one). */
function notice(): StopNotice & { stop(reason: unknown): void; listening(): number } {
  const listeners = new Set<() => void>();
  return {
    aborted: false,
    reason: undefined,
    onAbort(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop(reason) {
      Object.assign(this, { aborted: true, reason });
      for (const listener of listeners) listener();
    },
    listening: () => listeners.size,
  };
}

const passed = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CallAbort', () => {
  it("aborts the running attempt's controller with the caller's reason, and no other attempt starts live", () => {
    const caller = notice();
    const call = new CallAbort({ stop: caller }, null);
    const attempt = call.attempt();
    const reason = new Error('interrupted');
    caller.stop(reason);
    expect(attempt.signal.aborted).toBe(true);
    expect(attempt.signal.reason).toBe(reason);
    expect(call.attempt().signal.reason).toBe(reason);
    expect(call.timedOut).toBe(false);
  });

  it('follows a signal as it follows a stop notice', () => {
    const controller = new AbortController();
    const call = new CallAbort({ signal: controller.signal }, null);
    const attempt = call.attempt();
    controller.abort('gone');
    expect(attempt.signal.reason).toBe('gone');
  });

  it('starts aborted when the caller already stopped, and sets no deadline timer then', async () => {
    const caller = notice();
    caller.stop('before');
    const call = new CallAbort({ stop: caller }, Date.now() + 5);
    expect(call.attempt().signal.reason).toBe('before');
    await passed(30);
    expect(call.timedOut).toBe(false);
    expect(call.reason).toBe('before');
  });

  it('aborts with a DeadlineExceededError when the deadline passes first', async () => {
    const call = new CallAbort({ stop: notice() }, Date.now() + 5);
    const attempt = call.attempt();
    await passed(30);
    expect(call.timedOut).toBe(true);
    expect(attempt.signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it("keeps the caller's reason when the caller stopped before the deadline", async () => {
    const caller = notice();
    const call = new CallAbort({ stop: caller }, Date.now() + 20);
    caller.stop('user');
    await passed(50);
    expect(call.timedOut).toBe(false);
    expect(call.reason).toBe('user');
  });

  it('stops listening to its caller and clears its deadline once disposed', async () => {
    const caller = notice();
    const call = new CallAbort({ stop: caller }, Date.now() + 5);
    expect(caller.listening()).toBe(1);
    call.dispose();
    expect(caller.listening()).toBe(0);
    await passed(30);
    expect(call.aborted).toBe(false);
  });

  it('makes a signal from a stop notice only when asked (a retry wait), aborting with it', () => {
    const call = new CallAbort({}, null);
    const signal = signalOf(call);
    expect(signal.aborted).toBe(false);
    call.abort('stop');
    expect(signal.reason).toBe('stop');
  });
});
