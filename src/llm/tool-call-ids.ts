import type { Message } from './message.js';

/**
 * Tool call ids must be unique in the whole conversation: a `tool` message answers its call by id, and
 * a request with two calls under one id (or an empty id) is refused by the API, every later request
 * included. Models do send such ids (the same id twice in a message, an id of an earlier message, an
 * empty one, none), so each call's id is settled before it is announced or recorded: the model's own
 * when it is unique, else one made from the reply's stem and the call's index. Made ids are
 * deterministic (no randomness): a retried stream, a restored session and idempotency keys see the
 * same ids for the same conversation.
 */

/** The call ids a conversation already holds, as far as keeping new ones unique needs. */
export interface CallIdLookup {
  has(id: string): boolean;
}

/**
 * The ids of the calls of the assistant messages in `messages`, looked up when asked: nothing is
 * copied, and the conversation is read only when a reply has calls.
 */
export function callIdsIn(messages: readonly Message[]): CallIdLookup {
  return { has: (id) => holdsCallId(messages, id) };
}

function holdsCallId(messages: readonly Message[], id: string): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || message.tool_calls === undefined) continue;
    for (const call of message.tool_calls) if (call.id === id) return true;
  }
  return false;
}

/** Where the ids of one reply's calls are checked and made (fields of a `ModelRequest`). */
export interface CallIdScope {
  /** Ids the conversation already holds. */
  usedCallIds: CallIdLookup;
  /**
   * Stem of the ids made for calls without a usable id: `<stem>_<call index>`. It must name this reply
   * in its conversation, the same on a retry or after a restore (e.g. from the reply's position).
   */
  callIdStem: string;
}

/**
 * The id a call keeps: the model's own when it is non-empty and not `taken` (by the conversation or an
 * earlier call of the same message), else `<stem>_<index>`, then `<stem>_<index>_2`, `_3`, ... while
 * that is taken too.
 */
export function settleCallId(
  modelId: string | null | undefined,
  index: number,
  stem: string,
  taken: (id: string) => boolean,
): string {
  if (modelId && !taken(modelId)) return modelId;
  const made = `${stem}_${index}`;
  let id = made;
  for (let n = 2; taken(id); n++) id = `${made}_${n}`;
  return id;
}
