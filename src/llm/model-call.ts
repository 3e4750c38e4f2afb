import { DEFAULTS } from '../defaults.js';
import { copyWith } from '../object-copy.js';
import type { TelemetryScope } from '../telemetry/telemetry-scope.js';
import { CallAbort, DeadlineExceededError, type StopNotice } from './call-abort.js';
import { callsInText } from './chat-request.js';
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

/** What stops one model call (a signal or a stop notice) and who hears it as it goes. */
export interface ModelIo {
  /** Aborting ends the call at once; it rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /**
   * The same as `signal`, without one: stopping ends the call at once; it rejects with `stop.reason`.
   * An effect passes its `EffectIO`, so a call makes no signal for its caller (bench/README.md, lean36).
   */
  stop?: StopNotice | undefined;
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
 * Rejects with the caller's reason when it stops the call (`io.stop` or `io.signal`), a
 * `DeadlineExceededError` when the deadline passes, and an `LlmCallError` when the retry policy gives
 * up. One `AbortController` per attempt is all the call makes (`CallAbort`): the caller's stop, the
 * deadline and the stream's idle cut all abort it, heard through plain listeners (an `AbortSignal.any`
 * or a controller per stop source cost more than the rest of the call's bookkeeping, bench/README.md).
 */
export async function callModel(
  options: ModelOptions,
  request: ModelRequest,
  io: ModelIo,
): Promise<ModelReply> {
  const wire = wireFor(options, request);
  const stop = new CallAbort(io, request.deadline);
  const inText = callsInText(options, request);
  const idleMs = options.stream === false ? 0 : (options.streamIdleTimeoutMs ?? DEFAULTS.streamIdleTimeoutMs);
  const onCallReady = request.toolsEnabled && !inText ? io.onCallReady : undefined;
  let answered = 0;
  let startedAt = 0;
  const send = (controller: AbortController) => {
    const read: StreamReadOptions | undefined =
      options.stream === false
        ? undefined
        : {
            signal: controller.signal,
            controller,
            idleMs,
            scope: request,
            onText: io.onText,
            endText: io.endText,
            onCallReady,
            notice: options.onNotice,
          };
    return wire(read, controller.signal);
  };
  const attempt = (attemptNumber: number) => {
    if (attemptNumber > 1) io.onReset?.({ reason: 'retry', attempt: attemptNumber });
    answered = attemptNumber;
    startedAt = Date.now();
    const controller = stop.attempt();
    const telemetry = io.telemetry;
    if (!telemetry) return send(controller);
    return observedAttempt(telemetry, options, request, attemptNumber, () => send(controller));
  };
  const retry: RetryOptions = copyWith(options.retry, { stop, url: options.client.baseURL });
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
    if (stop.timedOut) throw new DeadlineExceededError();
    throw error;
  } finally {
    stop.dispose();
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
