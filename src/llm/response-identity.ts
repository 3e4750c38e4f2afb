import { isRecord } from './reply-fields.js';

/** Who answered a model call: the response's id and the model the server says answered. */
export interface ResponseIdentity {
  responseId?: string;
  responseModel?: string;
}

/**
 * The id and model a reply names: at the top of a Chat Completions body or chunk and of a Responses
 * API body, or under `response` in a Responses stream event (`response.created`). Fields that are not
 * strings are left out (a server's reply is hostile).
 */
export function responseIdentityOf(value: unknown): ResponseIdentity {
  if (!isRecord(value)) return {};
  const holder = isRecord(value.response) ? value.response : value;
  const identity: ResponseIdentity = {};
  if (typeof holder.id === 'string') identity.responseId = holder.id;
  if (typeof holder.model === 'string') identity.responseModel = holder.model;
  return identity;
}
