import type OpenAI from 'openai';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import { copyWith } from '../object-copy.js';
import type { Completion } from './model-reply.js';
import type { ReplyNotice } from './reply-fields.js';
import { responseIdentityOf } from './response-identity.js';
import { readResponse } from './responses-reply.js';
import type { CallIdScope } from './tool-call-ids.js';

/** Makes one non-streamed Responses API call (`stream: false`) through the SDK and reads it. */
export async function requestResponse(
  client: OpenAI,
  body: ResponseCreateParamsBase,
  signal: AbortSignal,
  scope: CallIdScope,
  notice?: ReplyNotice,
): Promise<Completion> {
  const response: unknown = await client.responses.create(copyWith(body, { stream: false as const }), {
    signal,
  });
  return Object.assign(readResponse(response, scope, notice), responseIdentityOf(response));
}
