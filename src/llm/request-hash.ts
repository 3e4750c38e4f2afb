import { createHash } from 'node:crypto';
import { workCounts } from '../work-counters.js';

/**
 * JSON with object keys sorted at every depth (arrays keep their order) and `undefined` members left
 * out, as `JSON.stringify` leaves them: two bodies equal as JSON values give the same text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined && typeof record[key] !== 'function')
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/** Body fields that say how the answer travels, not what is asked: left out of the hash. */
const TRANSPORT_FIELDS: ReadonlySet<string> = new Set(['stream', 'stream_options']);

/** Body fields holding the conversation: hashed item by item (`itemDigest`). */
const CONVERSATION_FIELDS: ReadonlySet<string> = new Set(['messages', 'input']);

/**
 * The identity of a model request: the SHA-256 (hex) of the canonical JSON (`canonicalJson`) of the
 * body as the wire sends it (after pruning and context blocks: model, `messages` or `input`, tools,
 * tool choice, response format, sampling parameters and every other field), without `stream` and
 * `stream_options`, so a streamed and a non-streamed call of the same request hash alike. `messages` /
 * `input` stands in that JSON as one digest chained over its items (`conversationDigest`): a
 * conversation's messages are immutable objects, so each is hashed once per agent, not once per call,
 * and a turn at 800 does not hash the 3,000 messages before it again (issue 28).
 *
 * The hash is of the request as sent, secrets included: a transcript is written redacted, so the
 * messages it holds may no longer hash to the recorded value; a replay compares the hash of the
 * request it is about to send (with the same secrets) against the recorded one.
 */
export function requestHash(body: object): string {
  return sha256(canonicalBody(body, TRANSPORT_FIELDS));
}

/**
 * `canonicalJson` of a request body without the `skipped` fields, the conversation as its digest and
 * a `tools` array as its text remembered per array (a tool registry hands out the same array until
 * its tools change): the same text `canonicalJson` gives, without walking every schema at every call.
 */
function canonicalBody(body: object, skipped: ReadonlySet<string>): string {
  workCounts.serializations++;
  const record = body as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const value = record[key];
    if (skipped.has(key) || value === undefined || typeof value === 'function') continue;
    const text =
      CONVERSATION_FIELDS.has(key) && Array.isArray(value)
        ? JSON.stringify(conversationDigest(value))
        : key === 'tools' && Array.isArray(value)
          ? toolsJson(value)
          : canonicalJson(value);
    members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/** Canonical JSON of tools arrays already seen, by identity. */
const toolsTexts = new WeakMap<object, string>();

function toolsJson(tools: readonly unknown[]): string {
  let text = toolsTexts.get(tools);
  if (text === undefined) {
    workCounts.serializations++;
    text = canonicalJson(tools);
    toolsTexts.set(tools, text);
  }
  return text;
}

/** `canonicalJson` of a request's settings (`requestSettings`), its tools' text remembered per array. */
export function canonicalSettings(settings: Record<string, unknown>): string {
  return canonicalBody(settings, NO_FIELDS);
}

const NO_FIELDS: ReadonlySet<string> = new Set();

/**
 * What a request asks besides its conversation: the body without `messages` / `input` and without
 * `stream` / `stream_options` (model, tools, tool choice, response format, sampling parameters, ...).
 * A saved session records it when it first appears or changes (`request_settings`), so a replay can
 * name the field of a changed tool schema; the conversation is in the transcript already.
 */
export function requestSettings(body: object): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!TRANSPORT_FIELDS.has(key) && !CONVERSATION_FIELDS.has(key)) kept[key] = value;
  }
  return kept;
}

/** A conversation hashed last, with the chain's digest after each of its items. */
interface HashedConversation {
  items: readonly unknown[];
  digests: string[];
}

/**
 * The conversation hashed last per first item (an agent's system message): the next call's list
 * extends it, so its known part is found by comparing item identities, without a lookup per item.
 */
const lastHashed = new WeakMap<object, HashedConversation>();

/**
 * `sha256(before + itemDigest(item))` over the items in order, starting from the empty string: equal
 * item lists give equal digests, and a list that extends one already hashed reuses its prefix. The
 * prefix shared with the last list hashed under the same first item costs an identity comparison per
 * item; past it, an item at the same place in both lists that follows the same digest takes the last
 * list's digest (a context block made anew for each call right after the system prompt parts the lists
 * for one item only), and any other item costs one hash of two digests (its own digest is remembered).
 * The chain's digests are kept for the last list only, not in an entry per message: a list that moves
 * items (a pruned or compacted view) or the same array again re-chains from where the lists part.
 */
function conversationDigest(items: readonly unknown[]): string {
  const first = items[0];
  const key = first !== null && typeof first === 'object' ? first : undefined;
  // The same array again may have been changed in place: only another array's items are compared.
  const last = key && lastHashed.get(key);
  const reusable = last !== undefined && last.items !== items;
  let known = 0;
  if (reusable) {
    const shared = Math.min(items.length, last.digests.length);
    while (known < shared && items[known] === last.items[known]) known++;
  }
  // The last list's digests are extended in place when this list extends it (its entry is replaced below).
  const digests = !reusable
    ? []
    : known === last.digests.length
      ? last.digests
      : last.digests.slice(0, known);
  let digest = digests[known - 1] ?? '';
  for (let i = known; i < items.length; i++) {
    const item = items[i];
    // Past a part that differs (a context block made anew for each call, with the same text), the last
    // list's chain is taken up again where the same item follows the same digest.
    if (
      reusable &&
      i < last.digests.length &&
      item === last.items[i] &&
      digest === (last.digests[i - 1] ?? '')
    )
      digest = last.digests[i]!;
    else digest = sha256(digest + itemDigest(item));
    digests.push(digest);
  }
  if (key) lastHashed.set(key, { items, digests });
  return digest;
}

/** Digests of conversation items already hashed, by identity (messages are never changed once made). */
const digests = new WeakMap<object, string>();

/** The SHA-256 of one conversation item's canonical JSON, remembered for objects. */
function itemDigest(item: unknown): string {
  let digest = item !== null && typeof item === 'object' ? digests.get(item) : undefined;
  if (digest === undefined) {
    workCounts.serializations++;
    digest = sha256(canonicalJson(item));
    if (item !== null && typeof item === 'object') digests.set(item, digest);
  }
  return digest;
}

function sha256(text: string): string {
  workCounts.hashes++;
  return createHash('sha256').update(text).digest('hex');
}
