/** Thrown when the turn's deadline passes during the call. */
export class DeadlineExceededError extends Error {
  readonly code = 'deadline_exceeded';
  constructor() {
    super("the turn's time limit was reached during the model call");
  }
}

/**
 * How a caller tells a model call to stop without making an `AbortSignal` for it: whether and why it
 * stopped, and a plain listener. An effect's `EffectIO` is one (src/machines/effect-io.ts).
 */
export interface StopNotice {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Calls `listener` once when stopped; returns how to stop listening. */
  onAbort(listener: () => void): () => void;
}

/**
 * What stops one model call: its caller (a stop notice or a signal) and its deadline. It makes no
 * `AbortController` of its own and no `AbortSignal.any`: each attempt gets one controller
 * ({@link CallAbort.attempt}), which the call's stop aborts and the stream reader's idle cut aborts
 * too, so a streamed call makes one controller where it made three (the caller's, the deadline's and
 * the reader's; the SDK adds its own to each request either way). bench/README.md, lean36.
 */
export class CallAbort implements StopNotice {
  aborted = false;
  reason: unknown = undefined;
  /** The deadline passed before the caller stopped the call. */
  timedOut = false;
  #attempt: AbortController | undefined;
  #listeners: (() => void)[] | undefined;
  #detach: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    caller: { signal?: AbortSignal | undefined; stop?: StopNotice | undefined },
    deadline: number | null,
  ) {
    const stop = caller.stop ?? (caller.signal ? fromSignal(caller.signal) : undefined);
    if (stop) {
      if (stop.aborted) this.abort(stop.reason);
      else this.#detach = stop.onAbort(() => this.abort(stop.reason));
    }
    if (deadline !== null && !this.aborted) {
      this.#timer = setTimeout(
        () => {
          if (this.aborted) return;
          this.timedOut = true;
          this.abort(new DeadlineExceededError());
        },
        Math.max(0, deadline - Date.now()),
      );
    }
  }

  /** Stops the call: the running attempt's controller aborts with `reason`, the listeners hear it. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.#attempt?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }

  /** The controller of the attempt about to start (aborted already if the call is): the request's signal. */
  attempt(): AbortController {
    const controller = new AbortController();
    if (this.aborted) controller.abort(this.reason);
    this.#attempt = controller;
    return controller;
  }

  onAbort(listener: () => void): () => void {
    this.#listeners ??= [];
    const listeners = this.#listeners;
    listeners.push(listener);
    return () => {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    };
  }

  /** The call is over: its deadline timer and its listener on the caller go. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#detach?.();
    this.#detach = undefined;
    this.#attempt = undefined;
    this.#listeners = undefined;
  }
}

/**
 * A stop notice whose `AbortSignal` is made only when first read: most effects and tools never read
 * it, and an AbortController per run was a measurable share of a run's cost (bench/README.md). A
 * signal first read after the stop is made aborted; the first reason given stands, as for a
 * controller. What an effect's `EffectIO` (src/machines/agent-effects.ts) and a tool call's signal
 * (src/tools/execute-tool-call.ts) are built on.
 */
export class LazyAbort implements StopNotice {
  #controller: AbortController | undefined;
  #listeners: Set<() => void> | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  onAbort(listener: () => void): () => void {
    this.#listeners ??= new Set();
    const listeners = this.#listeners;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Stops: `aborted` is set first, then the signal (if made) aborts and the listeners hear it, once. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }
}

/** A `StopNotice` from an AbortSignal: its listener is the signal's own `abort` listener. */
export function fromSignal(signal: AbortSignal): StopNotice {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason;
    },
    onAbort(listener) {
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}

/**
 * An `AbortSignal` that aborts when `stop` does: for the rare paths that need a real signal (a retry's
 * wait). Its listener on `stop` lasts as long as `stop` keeps listeners.
 */
export function signalOf(stop: StopNotice): AbortSignal {
  const controller = new AbortController();
  if (stop.aborted) controller.abort(stop.reason);
  else stop.onAbort(() => controller.abort(stop.reason));
  return controller.signal;
}
