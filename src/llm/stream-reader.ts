import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { copyWith } from '../object-copy.js';
import { CompletionAssembler } from './completion-assembler.js';
import { StreamCutError } from './error-classification.js';
import type { Completion, ModelToolCall, StreamAssembler } from './model-reply.js';
import type { ReplyNotice } from './reply-fields.js';
import { type ResponseIdentity, responseIdentityOf } from './response-identity.js';
import type { CallIdScope } from './tool-call-ids.js';

/** How one stream is read and who hears it as it comes. */
export interface StreamReadOptions {
  /** Aborts the request and the read. */
  signal: AbortSignal;
  /**
   * The controller of `signal`, made for this read alone (a model call's attempt, `CallAbort`): the
   * idle cut aborts it, and the reader makes no controller of its own nor listens on `signal`.
   */
  controller?: AbortController | undefined;
  /** A stream (or the wait for its first byte) silent this long is cut with a `StreamCutError`. */
  idleMs: number;
  /** Checks and makes the calls' ids. */
  scope: CallIdScope;
  /** Text as it streams; the deltas of one network read come as one (see `readCompletionStream`). */
  onText?: ((delta: string) => void) | undefined;
  /**
   * `false`: text still pending when the stream ends is not sent to `onText` (the completion carries
   * it; a listener that only keeps text for a cut-short stream has no use for it). Default true.
   */
  endText?: boolean | undefined;
  /** Each call once its arguments are certainly complete, its id settled (`CompletionAssembler`). */
  onCallReady?: ((call: ModelToolCall) => void) | undefined;
  /** Hears content parts left out of the answer (unknown part types). */
  notice?: ReplyNotice | undefined;
}

/**
 * Reads one streamed completion (`stream: true` with usage) through the SDK and assembles it.
 *
 * A server that stops sending mid-stream would hang the read forever: an idle timer cuts it
 * (`StreamCutError`, retryable). One timer per read: a chunk only notes the time, and the timer, when
 * it fires, re-arms itself for what is left of the idle window (re-arming a timer per chunk cost more
 * than reading the chunk).
 *
 * Text deltas parsed from one network read go to `onText` as one delta, and calls that became ready in
 * it go to `onCallReady` after that text: both when the event loop turns (`setImmediate`). A listener
 * that does a full machine step per delta would otherwise spend more on a burst of small deltas than on
 * the rest of the stream (bench/README.md). Joined, the deltas are the same text; a stream that fails
 * drops its pending text (a retry's reset discards the text shown anyway). Calls still waiting when the
 * stream ends are not announced: the stream's end carries them, and an announcement would cost the
 * listener one more machine step for a start no earlier than the end's.
 *
 * Rejects with `signal.reason` when the signal aborts, and with a `StreamCutError` when the stream
 * ends without a `finish_reason` (the SDK ends such a stream quietly).
 */
export function readCompletionStream(
  client: OpenAI,
  body: ChatCompletionCreateParamsBase,
  options: StreamReadOptions,
): Promise<Completion> {
  return readModelStream(
    (signal) =>
      client.chat.completions.create(
        copyWith(body, { stream: true as const, stream_options: { include_usage: true } }),
        { signal },
      ),
    (onText, onReady) => new CompletionAssembler(options.scope, { onText, onReady, notice: options.notice }),
    options,
  );
}

/**
 * Reads one stream of either wire, as `readCompletionStream` describes: `open` makes the request with
 * the signal given, `assemble` makes the assembler with the text and ready-call listeners.
 */
export async function readModelStream(
  open: (signal: AbortSignal) => Promise<AsyncIterable<unknown>>,
  assemble: (
    onText: ((text: string) => void) | undefined,
    onReady: ((call: ModelToolCall) => void) | undefined,
  ) => StreamAssembler,
  options: StreamReadOptions,
): Promise<Completion> {
  const { signal, idleMs, onText, onCallReady } = options;
  // The read's own controller (the idle cut aborts it) is the caller's when it is this read's alone;
  // otherwise one that follows the caller's signal.
  let idle = options.controller;
  let forward: (() => void) | undefined;
  if (!idle) {
    const own = new AbortController();
    idle = own;
    forward = () => own.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
  }
  const cut = idle;
  let lastData = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    const quiet = Date.now() - lastData;
    if (quiet >= idleMs) cut.abort(new StreamCutError(`no data from the model server for ${idleMs} ms`));
    else timer = setTimeout(check, idleMs - quiet);
  };
  timer = setTimeout(check, idleMs);

  let pending = '';
  let ready: ModelToolCall[] = [];
  let flushAt: ReturnType<typeof setImmediate> | undefined;
  /**
   * Sends the pending text (at the stream's end only with `endText`), then (unless the stream has
   * ended) the calls that became ready.
   */
  const flush = (withCalls: boolean) => {
    if (flushAt !== undefined) clearImmediate(flushAt);
    flushAt = undefined;
    if (pending && (withCalls || options.endText !== false)) {
      const delta = pending;
      pending = '';
      onText!(delta);
    }
    const calls = ready;
    ready = [];
    if (withCalls) for (const call of calls) onCallReady!(call);
  };
  const flushSoon = () => {
    flushAt ??= setImmediate(() => flush(true));
  };
  const assembler = assemble(
    onText &&
      ((text) => {
        pending += text;
        flushSoon();
      }),
    onCallReady &&
      ((call) => {
        ready.push(call);
        flushSoon();
      }),
  );
  const opened = lastData;
  let firstChunkMs: number | undefined;
  let identity: ResponseIdentity = {};
  try {
    const response = await open(cut.signal);
    for await (const chunk of response) {
      lastData = Date.now();
      firstChunkMs ??= lastData - opened;
      if (identity.responseId === undefined) identity = responseIdentityOf(chunk);
      assembler.push(chunk);
    }
    // An aborted stream ends quietly in the SDK; a stream closed early by the server is a cut (retried).
    cut.signal.throwIfAborted();
    if (!assembler.ended) throw new StreamCutError();
    flush(false);
    const completion = assembler.toCompletion();
    if (firstChunkMs !== undefined) completion.firstChunkMs = firstChunkMs;
    return Object.assign(completion, identity);
  } catch (error) {
    // The SDK throws its own abort error when the signal aborts before the body streams: the reason
    // is the caller's (forwarded) or the idle cut's.
    if (cut.signal.aborted) throw cut.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    if (flushAt !== undefined) clearImmediate(flushAt);
    if (forward) signal.removeEventListener('abort', forward);
  }
}
