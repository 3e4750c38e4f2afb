import { createHash } from 'node:crypto';

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

/**
 * The identity of a model request: the SHA-256 (hex) of the canonical JSON (`canonicalJson`) of the
 * body as the wire sends it (after pruning and context blocks: model, `messages` or `input`, tools,
 * tool choice, response format, sampling parameters and every other field), without `stream` and
 * `stream_options`, so a streamed and a non-streamed call of the same request hash alike.
 *
 * The hash is of the request as sent, secrets included: a transcript is written redacted, so the
 * messages it holds may no longer hash to the recorded value; a replay compares the hash of the
 * request it is about to send (with the same secrets) against the recorded one.
 */
export function requestHash(body: object): string {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!TRANSPORT_FIELDS.has(key)) kept[key] = value;
  return createHash('sha256').update(canonicalJson(kept)).digest('hex');
}
