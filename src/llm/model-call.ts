import { DEFAULTS } from '../defaults.js';
import type { TelemetryScope } from '../telemetry/telemetry-scope.js';
import { callsInText } from './chat-request.js';
import { DeadlineExceededError } from './deadline.js';
import { observedAttempt } from './model-call-telemetry.js';
import {
  type Completion,
  type ModelCallRecord,
  type ModelReply,
  type ModelToolCall,
  toModelReply,
} from './model-reply.js';
import type { ModelApi, ModelOptions, ModelRequest } from './model-request.js';
import { wireFor } from './model-wire.js';
import { requestHash, requestSettings } from './request-hash.js';
import { type RetryInfo, type RetryOptions, resolveRetryPolicy, withRetry } from './retry-policy.js';
import type { StreamReadOptions } from './stream-reader.js';
import { xmlCallsOf } from './xml-tool-calls.js';

/** What `onRetry` hears before each wait: the attempt that failed, the wait, the error, the attempts allowed. */
export interface ModelRetryInfo extends RetryInfo {
  maxAttempts: number;
}

/** What `onReset` hears when an attempt after the first begins: what earlier attempts streamed is void. */
export interface ModelResetInfo {
  reason: 'retry';
  /** The attempt beginning, from 2. */
  attempt: number;
}

/** The abort signal of one model call and who hears it as it goes. */
export interface ModelIo {
  /** Aborting ends the call at once; it rejects with the signal's reason. */
  signal: AbortSignal;
  /** Streamed text (the deltas of one network read as one). */
  onText?: (delta: string) => void;
  /**
   * `false`: the text of the stream's last read is not sent to `onText` when the stream ended with it
   * (the reply carries it). Default true.
   */
  endText?: boolean;
  /**
   * A call whose arguments are certainly complete, before the stream ends: streaming, native tools
   * enabled. Its id is the one the reply keeps. A later attempt (`onReset`) voids it.
   */
  onCallReady?: (call: ModelToolCall) => void;
  onRetry?: (info: ModelRetryInfo) => void;
  onReset?: (info: ModelResetInfo) => void;
  /** The agent's telemetry: each HTTP attempt is reported (a retried call has one per attempt). */
  telemetry?: Pick<TelemetryScope, 'modelCallStart' | 'modelCallEnd'> | undefined;
}

/**
 * One model call: a Chat Completions or Responses API request (`options.api`) through the SDK,
 * streamed or not, with the retry policy and the request's deadline. Resolves with the assistant
 * message as it goes into the conversation (with its reasoning items on the Responses wire), its
 * calls with ids unique in the conversation, `finishReason`, usage and reasoning.
 *
 * Rejects with `io.signal`'s reason when it aborts, a `DeadlineExceededError` when the deadline passes,
 * and an `LlmCallError` when the retry policy gives up. Without a deadline the caller's signal is used
 * as it is: an `AbortController` and an `AbortSignal.any` per call cost more than the rest of the
 * call's bookkeeping (bench/README.md).
 */
export async function callModel(
  options: ModelOptions,
  request: ModelRequest,
  io: ModelIo,
): Promise<ModelReply> {
  const signal = io.signal;
  const wire = wireFor(options, request);
  let deadline: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (request.deadline !== null) {
    const controller = new AbortController();
    deadline = controller;
    timer = setTimeout(
      () => controller.abort(new DeadlineExceededError()),
      Math.max(0, request.deadline - Date.now()),
    );
  }
  const combined = deadline ? AbortSignal.any([signal, deadline.signal]) : signal;
  const inText = callsInText(options, request);
  const read: StreamReadOptions | undefined =
    options.stream === false
      ? undefined
      : {
          signal: combined,
          idleMs: options.streamIdleTimeoutMs ?? DEFAULTS.streamIdleTimeoutMs,
          scope: request,
          onText: io.onText,
          endText: io.endText,
          onCallReady: request.toolsEnabled && !inText ? io.onCallReady : undefined,
          notice: options.onNotice,
        };
  let answered = 0;
  let startedAt = 0;
  const attempt = (attemptNumber: number) => {
    if (attemptNumber > 1) io.onReset?.({ reason: 'retry', attempt: attemptNumber });
    answered = attemptNumber;
    startedAt = Date.now();
    const telemetry = io.telemetry;
    if (!telemetry) return wire(read, combined);
    return observedAttempt(telemetry, options, request, attemptNumber, () => wire(read, combined));
  };
  const retry: RetryOptions = { ...options.retry, signal: combined, url: options.client.baseURL };
  if (request.deadline !== null) retry.deadline = request.deadline;
  const onRetry = io.onRetry;
  if (onRetry) {
    retry.onRetry = (info) =>
      onRetry({ ...info, maxAttempts: resolveRetryPolicy(options.retry).maxAttempts });
  }
  try {
    const completion = await withRetry(attempt, retry);
    if (inText) completion.calls = xmlCallsOf(completion.content, request);
    const reply = toModelReply(completion, request.toolsEnabled);
    reply.record = callRecord(
      options.api ?? 'chat-completions',
      completion,
      answered,
      Date.now() - startedAt,
    );
    return reply;
  } catch (error) {
    if (deadline?.signal.aborted && !signal.aborted) throw new DeadlineExceededError();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The call's record. Its `requestHash` and `settings` are worked out from the body when first read
 * (pay as you go: an agent without a saved session or a `model_call` listener never reads them, and the
 * hash is most of what a record would cost), then kept; to a reader, spread or `JSON.stringify` they are
 * plain fields.
 */
function callRecord(
  wire: ModelApi,
  completion: Completion,
  attempt: number,
  durationMs: number,
): ModelCallRecord {
  // Fields in the order the record always had: the entry a saved session writes keeps its shape.
  const record = { wire } as ModelCallRecord;
  const body = completion.requestBody;
  // The getters are shared by every record (a getter made per record gives each record a hidden class
  // of its own, bench/README.md issue 37); what they read sits in a non-enumerable field that spreads,
  // `JSON.stringify` and `structuredClone` do not copy.
  Object.defineProperty(record, LAZY, { value: { body } satisfies LazyFields });
  Object.defineProperty(record, 'requestHash', { enumerable: true, configurable: true, get: hashOfRecord });
  record.attempt = attempt;
  record.durationMs = durationMs;
  if (completion.responseId !== undefined) record.responseId = completion.responseId;
  if (completion.responseModel !== undefined) record.responseModel = completion.responseModel;
  if (completion.firstChunkMs !== undefined) record.firstChunkMs = completion.firstChunkMs;
  if (body) {
    Object.defineProperty(record, 'settings', {
      enumerable: true,
      configurable: true,
      get: settingsOfRecord,
    });
  }
  return record;
}

/** Where a record keeps its request body and what was worked out from it. */
const LAZY = Symbol('agentloop.modelCallRecord');

interface LazyFields {
  body: Completion['requestBody'];
  hash?: string;
  settings?: Record<string, unknown>;
}

function hashOfRecord(this: { [LAZY]: LazyFields }): string {
  const lazy = this[LAZY];
  lazy.hash ??= lazy.body ? requestHash(lazy.body) : '';
  return lazy.hash;
}

function settingsOfRecord(this: { [LAZY]: LazyFields }): Record<string, unknown> {
  const lazy = this[LAZY];
  lazy.settings ??= requestSettings(lazy.body!);
  return lazy.settings;
}
