import type { Message } from '../../src/llm/message.js';
import type { AgentActorEvent } from '../../src/machines/agent-events.js';

import type { EffectIO } from '../../src/machines/effect-io.js';
/** What a test holds of an effect run: its `EffectIO`, the events it sent, and how to stop it. */
export interface EffectRunProbe {
  io: EffectIO;
  /** The events the effect sent to the machine, in order (none after the stop). */
  sent: AgentActorEvent[];
  /** Stops the run as the machine does: `aborted`, then the signal aborts and the listeners hear it. */
  stop(reason?: unknown): void;
}

/**
 * An `EffectIO` for running an effect (`callLlmEffect(...)`, `runToolsEffect(...)`, `compactEffect(...)`)
 * on its own, without the agent machine: it records what the effect sends and stops as the machine's
 * effect actor does (sends after the stop are dropped). `conversation` is what `io.conversation()` gives.
 */
export function effectRun(conversation?: readonly Message[]): EffectRunProbe {
  const controller = new AbortController();
  const listeners = new Set<() => void>();
  const sent: AgentActorEvent[] = [];
  let stopped = false;
  let why: unknown;
  const io: EffectIO = {
    get signal() {
      return controller.signal;
    },
    get aborted() {
      return stopped;
    },
    get reason() {
      return why;
    },
    onAbort(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    send(event) {
      if (!stopped) sent.push(event);
    },
    ...(conversation ? { conversation: () => conversation } : {}),
  };
  const stop = (reason: unknown = new DOMException('stopped by the test', 'AbortError')) => {
    stopped = true;
    why = reason;
    controller.abort(reason);
    for (const listener of listeners) listener();
    listeners.clear();
  };
  return { io, sent, stop };
}

/**
 * Starts an effect with a fresh run, stops the run once `server` has received its request (the call
 * is under way), and returns what the effect rejected with (`undefined` if it resolved) and the reason
 * the run was stopped with.
 */
export async function stopDuringRequest(
  server: { requestCount: number },
  start: (io: EffectIO) => Promise<unknown>,
): Promise<{ error: unknown; reason: Error }> {
  const run = effectRun();
  const settled = start(run.io).then(
    () => undefined,
    (e: unknown) => e,
  );
  while (server.requestCount === 0) await new Promise((r) => setTimeout(r, 5));
  const reason = new Error('interrupted');
  run.stop(reason);
  return { error: await settled, reason };
}
