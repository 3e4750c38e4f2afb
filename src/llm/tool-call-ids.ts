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
 * The ids of the calls of the assistant messages in `messages`, for one reply (the conversation is
 * read when first asked). An agent's model calls use one `callIdIndex()`, which reads only what each
 * reply's conversation appended since the last.
 */
export function callIdsIn(messages: readonly Message[]): CallIdLookup {
  return callIdIndex().lookup(messages);
}

/** Call ids of one conversation's messages, for its replies one after another. */
export interface CallIdIndex {
  /** The ids `messages` holds, read when first asked. */
  lookup(messages: readonly Message[]): CallIdLookup;
}

/**
 * An index of one conversation's call ids, extended by what each lookup's array appended. A
 * conversation is append-only and every message of it is an object made when it was appended
 * (restore makes new ones), so an array whose first message and message at `count - 1` are those the
 * index last saw holds the indexed messages as its first `count`: only the rest is read. Any other
 * array (a shorter one, another conversation, a branch of a state-graph traversal) is indexed anew.
 * Each id keeps the position of its first message, and a lookup of an array of length `n` answers
 * only for positions below `n`, so a later lookup's additions never change an earlier lookup's
 * answers (a retried stream settles the same ids). The answers are a scan's, so made ids stay
 * deterministic; a reply's lookup costs its new messages, not the conversation.
 */
export function callIdIndex(): CallIdIndex {
  let first: Message | undefined;
  let last: Message | undefined;
  let count = 0;
  let positions = new Map<string, number>();
  const extend = (messages: readonly Message[]) => {
    if (messages[0] !== first || count > messages.length || (count > 0 && messages[count - 1] !== last)) {
      first = messages[0];
      count = 0;
      positions = new Map();
    }
    for (let i = count; i < messages.length; i++) {
      const message = messages[i]!;
      if (message.role !== 'assistant' || message.tool_calls === undefined) continue;
      for (const call of message.tool_calls) if (!positions.has(call.id)) positions.set(call.id, i);
    }
    count = messages.length;
    last = messages[count - 1];
    return positions;
  };
  return {
    lookup(messages) {
      const length = messages.length;
      let ids: ReadonlyMap<string, number> | undefined;
      return {
        has: (id) => {
          ids ??= extend(messages);
          const at = ids.get(id);
          return at !== undefined && at < length;
        },
      };
    },
  };
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
