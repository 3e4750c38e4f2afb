import { DEFAULTS } from '../defaults.js';
import { type StopNotice, signalOf } from './call-abort.js';
import { type ClassifiedError, classifyLlmError, type LlmErrorKind } from './error-classification.js';

/** How a backoff delay is randomised: `full` draws from [0, d), `equal` from [d/2, d), `none` waits d. */
export type Jitter = 'full' | 'equal' | 'none';

/** The numbers of a retry policy; every field has a default in `DEFAULTS`. */
export interface RetryPolicy {
  /** Attempts in all, the first call included (default 4: 1 + 3 retries). */
  maxAttempts: number;
  /** Delay before the first retry, before jitter; it doubles each retry (default 500 ms). */
  baseDelayMs: number;
  /** Ceiling of the exponential delay, before jitter (default 30 s). */
  maxDelayMs: number;
  /** Longest wait a `retry-after` header may impose; a longer one is cut to this (default 60 s). */
  retryAfterCapMs: number;
  /** Default `full`. */
  jitter: Jitter;
}

/** What `onRetry` hears before each wait. */
export interface RetryInfo {
  /** The attempt that just failed, from 1. */
  attempt: number;
  /** How long the policy waits before the next attempt, in ms. */
  delayMs: number;
  error: ClassifiedError;
}

/** Options of `withRetry`: the policy plus the hooks that make it testable and interruptible. */
export interface RetryOptions extends Partial<RetryPolicy> {
  /** Aborting stops at once: the pending wait rejects with `signal.reason`, no attempt follows. */
  signal?: AbortSignal;
  /**
   * The same as `signal`, heard without one (a model call's `CallAbort`): a signal is made from it only
   * for a wait between attempts.
   */
  stop?: StopNotice;
  /** Called before each wait (for a `retry` event or a log line). */
  onRetry?: (info: RetryInfo) => void;
  /** Source of randomness in [0, 1) for the jitter; `Math.random` by default. */
  random?: () => number;
  /** Waits `ms`, rejecting with `signal.reason` when the signal aborts; `abortableSleep` by default. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Turns a thrown value into a verdict; `classifyLlmError` by default. */
  classify?: (err: unknown) => ClassifiedError;
  /** The server's base URL, named in the default verdict's message for connection errors. */
  url?: string;
  /** Epoch ms after which no wait may end (the turn's deadline): a retry that would pass it is not made. */
  deadline?: number;
  /** Clock for `deadline`; `Date.now` by default. */
  now?: () => number;
}

/** The error `withRetry` throws when it gives up: the last failure, classified, with the attempt count. */
export class LlmCallError extends Error {
  override readonly name = 'LlmCallError';
  readonly kind: LlmErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** Attempts made, the failing one included. */
  readonly attempts: number;

  constructor(error: ClassifiedError, attempts: number, cause: unknown) {
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    super(`LLM call failed (${error.kind}) after ${tries}: ${error.message}`, { cause });
    this.kind = error.kind;
    this.retryable = error.retryable;
    this.status = error.status;
    this.code = error.code;
    this.retryAfterMs = error.retryAfterMs;
    this.attempts = attempts;
  }

  /** The classification this error carries. */
  toClassified(): ClassifiedError {
    return {
      kind: this.kind,
      retryable: this.retryable,
      message: this.message,
      ...(this.status !== undefined && { status: this.status }),
      ...(this.code !== undefined && { code: this.code }),
      ...(this.retryAfterMs !== undefined && { retryAfterMs: this.retryAfterMs }),
    };
  }
}

/** The policy with every unset field taken from `DEFAULTS`. */
export function resolveRetryPolicy(options: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? DEFAULTS.llmMaxAttempts)),
    baseDelayMs: options.baseDelayMs ?? DEFAULTS.llmRetryBaseDelayMs,
    maxDelayMs: options.maxDelayMs ?? DEFAULTS.llmRetryMaxDelayMs,
    retryAfterCapMs: options.retryAfterCapMs ?? DEFAULTS.llmRetryAfterCapMs,
    jitter: options.jitter ?? 'full',
  };
}

/**
 * The wait before retry number `retry` (1 for the first retry). A server's `retryAfterMs` wins
 * (capped by `retryAfterCapMs`, no jitter: the server named the moment); otherwise
 * `min(maxDelayMs, baseDelayMs * 2^(retry-1))` with the policy's jitter. Pure.
 */
export function retryDelayMs(
  retry: number,
  error: ClassifiedError,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (error.retryAfterMs !== undefined) {
    return Math.round(Math.min(Math.max(0, error.retryAfterMs), policy.retryAfterCapMs));
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  switch (policy.jitter) {
    case 'none':
      return Math.round(ceiling);
    case 'equal':
      return Math.round(ceiling / 2 + (random() * ceiling) / 2);
    default:
      return Math.round(random() * ceiling);
  }
}

/**
 * Runs `attempt` until it succeeds, the error is not retryable, attempts run out, the deadline
 * would pass, or the signal aborts. Between attempts it waits per `retryDelayMs`.
 *
 * Give the OpenAI client `maxRetries: 0`: otherwise the SDK retries inside each attempt with its
 * own backoff (2 retries by default) and this policy's counts, delays and events are wrong.
 *
 * Rejects with `signal.reason` when the signal aborts (before an attempt, during one, or while
 * waiting), and otherwise with an `LlmCallError` carrying the last error as `cause`.
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const { signal, stop } = options;
  const throwIfStopped = () => {
    signal?.throwIfAborted();
    if (stop?.aborted) throw stop.reason;
  };
  // The policy is read when an attempt fails: a call answered at the first attempt (most) pays for
  // nothing else (bench/README.md, issue 37).
  let policy: RetryPolicy | undefined;
  for (let attemptNumber = 1; ; attemptNumber++) {
    throwIfStopped();
    try {
      return await attempt(attemptNumber);
    } catch (err) {
      throwIfStopped();
      policy ??= resolveRetryPolicy(options);
      const error = options.classify ? options.classify(err) : classifyError(err, options.url);
      if (!error.retryable || attemptNumber >= policy.maxAttempts) {
        throw new LlmCallError(error, attemptNumber, err);
      }
      const delayMs = retryDelayMs(attemptNumber, error, policy, options.random ?? Math.random);
      if (options.deadline !== undefined && (options.now ?? Date.now)() + delayMs > options.deadline) {
        throw new LlmCallError(error, attemptNumber, err);
      }
      options.onRetry?.({ attempt: attemptNumber, delayMs, error });
      await (options.sleep ?? abortableSleep)(delayMs, signal ?? (stop ? signalOf(stop) : undefined));
    }
  }
}

/** A nested `withRetry` already retried: keep its verdict but do not retry again. */
function classifyError(err: unknown, url: string | undefined): ClassifiedError {
  if (err instanceof LlmCallError) return { ...err.toClassified(), retryable: false };
  return classifyLlmError(err, url === undefined ? {} : { url });
}

/** Resolves after `ms`, or rejects with `signal.reason` as soon as the signal aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
