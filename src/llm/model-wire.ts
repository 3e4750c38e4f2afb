import { APIError } from 'openai';
import { buildChatBody } from './chat-request.js';
import { requestCompletion } from './completion-call.js';
import type { Completion } from './model-reply.js';
import type { ChatRequestOptions, ModelOptions, ModelRequest } from './model-request.js';
import { requestResponse } from './responses-call.js';
import { buildResponsesBody } from './responses-request.js';
import { readResponsesStream } from './responses-stream.js';
import { readCompletionStream, type StreamReadOptions } from './stream-reader.js';

/**
 * One model call's request on its wire: one attempt, streamed (`read`) or not. Both wires yield the
 * same `Completion`, so the call, the retry policy and the machine do not know which one spoke.
 */
export type WireAttempt = (read: StreamReadOptions | undefined, signal: AbortSignal) => Promise<Completion>;

/** The attempt function of `options.api` for this request (its body is built once, here). */
export function wireFor(options: ModelOptions, request: ModelRequest): WireAttempt {
  const { client, onNotice } = options;
  if (options.api !== 'responses') {
    const body = buildChatBody(options, request);
    return async (read, signal) =>
      hashed(
        await (read
          ? readCompletionStream(client, body, read)
          : requestCompletion(client, body, signal, request, onNotice)),
        body,
      );
  }
  const build = () => buildResponsesBody(options, request, !withoutEncryptedReasoning.has(options));
  let body = build();
  const once: WireAttempt = async (read, signal) =>
    hashed(
      await (read
        ? readResponsesStream(client, body, read)
        : requestResponse(client, body, signal, request, onNotice)),
      body,
    );
  return async (read, signal) => {
    try {
      return await once(read, signal);
    } catch (error) {
      if (!body.include || !refusesEncryptedReasoning(error)) throw error;
      // A model without reasoning refuses the encrypted reasoning: ask it without, from now on.
      withoutEncryptedReasoning.add(options);
      body = build();
      return once(read, signal);
    }
  };
}

/** The completion with the body that was answered (its record hashes it only if asked: `callModel`). */
function hashed(completion: Completion, body: object): Completion {
  completion.requestBody = body;
  return completion;
}

/** Model options whose server refused `include: ['reasoning.encrypted_content']` (models that do not reason). */
const withoutEncryptedReasoning = new WeakSet<ChatRequestOptions>();

function refusesEncryptedReasoning(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const param = (error.error as { param?: unknown } | undefined)?.param;
  return param === 'include' || /encrypted content is not supported/i.test(error.message);
}
