/**
 * What inspectors may see. Everything an inspector sends (the Stately inspector, the local inspector
 * page) goes through a sanitizer first: configured secrets and the API key are replaced wherever they
 * appear, values under secret-looking keys are hidden, and long strings are cut.
 */

import { looksLikeSecret } from '../events/secret-shape.js';

/** Options of {@link createSanitizer}. */
export interface SanitizeOptions {
  /** Strings never sent (API keys, tokens). Shorter than 4 characters are ignored (they would match anywhere). */
  secrets?: readonly (string | undefined | null)[];
  /** Strings longer than this are cut, with a note of how much was cut (default 2000). */
  maxStringChars?: number;
  /** Objects nested deeper are replaced by a note (default 12). */
  maxDepth?: number;
  /** Keys whose value is passed through uncut (still redacted), e.g. a machine definition. */
  uncutKeys?: readonly string[];
  /** Arrays longer than this keep their last items, after a note of how many were left out (default: all). */
  maxArrayItems?: number;
  /** Arrays under these keys are replaced by a count, e.g. `messages` in a model call's input. */
  countKeys?: readonly string[];
}

/** A function that returns a JSON-safe, sanitized copy of any value. */
export type Sanitizer = (value: unknown) => unknown;

/** What a redacted secret becomes. */
export const REDACTED = '[redacted]';

/** Keys whose string values are hidden whatever they hold. */
const SECRET_KEY =
  /^(api[-_]?key|authorization|proxy-authorization|password|passwd|secret|client[-_]?secret|access[-_]?token|refresh[-_]?token|bearer|cookie|set-cookie|x-api-key)$/i;

/** The secrets agentloop always hides: `OPENAI_API_KEY` from the environment. */
export function defaultSecrets(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  return [env.OPENAI_API_KEY].filter((s): s is string => typeof s === 'string' && looksLikeSecret(s));
}

/** Cuts `text` to at most `max` characters (idempotent: a cut string is not cut again). */
export function cutString(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - 24);
  return `${text.slice(0, keep)}…[+${text.length - keep} chars]`;
}

/**
 * Builds a sanitizer. The copy it returns is plain JSON (functions, symbols and `undefined` dropped,
 * cycles and over-deep values replaced by a note, `Error`s reduced to name and message).
 */
export function createSanitizer(options: SanitizeOptions = {}): Sanitizer {
  const secrets = [...new Set(options.secrets ?? [])]
    .filter((s): s is string => typeof s === 'string' && s.length >= 4)
    // Longest first, so a secret containing another is replaced whole.
    .sort((a, b) => b.length - a.length);
  const max = options.maxStringChars ?? 2000;
  const maxDepth = options.maxDepth ?? 12;
  const uncut = new Set(options.uncutKeys ?? []);
  const maxItems = options.maxArrayItems ?? Number.POSITIVE_INFINITY;
  const countKeys = new Set(options.countKeys ?? []);

  const redact = (text: string): string => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };

  const visit = (value: unknown, depth: number, seen: Set<object>, key: string | undefined): unknown => {
    if (typeof value === 'string') {
      if (key !== undefined && SECRET_KEY.test(key)) return REDACTED;
      // Redact before cutting, so a secret straddling the cut cannot leave a recognisable head.
      const clean = redact(value);
      return key !== undefined && uncut.has(key) ? clean : cutString(clean, max);
    }
    if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object') return undefined;
    if (seen.has(value)) return '[circular]';
    if (depth >= maxDepth) return '[too deep]';
    seen.add(value);
    try {
      if (value instanceof Error) {
        const out: Record<string, unknown> = {
          name: value.name,
          message: visit(value.message, depth + 1, seen, 'message'),
        };
        const code = (value as { code?: unknown }).code;
        if (typeof code === 'string' || typeof code === 'number') out.code = code;
        return out;
      }
      if (Array.isArray(value) && key !== undefined && countKeys.has(key)) return `[${value.length} ${key}]`;
      if (Array.isArray(value)) {
        const items = value.length > maxItems ? value.slice(-maxItems) : value;
        const out = items.map((item) => visit(item, depth + 1, seen, undefined) ?? null);
        if (items !== value) out.unshift(`[${value.length - items.length} earlier items left out]`);
        return out;
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function' && !(value instanceof Map)) {
        return visit((value as { toJSON(): unknown }).toJSON(), depth + 1, seen, key);
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const clean = visit(v, depth + 1, seen, k);
        // Keys are data too (e.g. a map keyed by tool name and arguments).
        if (clean !== undefined) out[cutString(redact(k), max)] = clean;
      }
      return out;
    } finally {
      seen.delete(value);
    }
  };

  return (value) => visit(value, 0, new Set(), undefined);
}

/** The machine events that carry one streamed token chunk each: inspectors filter them out. */
export const TOKEN_CHUNK_EVENTS: ReadonlySet<string> = new Set(['LLM.DELTA']);

/** Whether an XState event object is a streamed token chunk. */
export function isTokenChunkEvent(event: { type?: unknown } | undefined | null): boolean {
  return typeof event?.type === 'string' && TOKEN_CHUNK_EVENTS.has(event.type);
}

/**
 * A summary of the agent context for inspectors: every field sanitized, with `messages` replaced by
 * their count and a cut copy of the last few (the whole conversation goes only to the local page's
 * transcript channel, where it is sent once and then as appended deltas).
 */
export function sanitizeAgentContext(
  context: unknown,
  sanitize: Sanitizer,
  options: { lastMessages?: number } = {},
): unknown {
  if (context === null || typeof context !== 'object') return sanitize(context);
  const { messages, ...rest } = context as { messages?: unknown[] } & Record<string, unknown>;
  const out = sanitize(rest) as Record<string, unknown>;
  if (Array.isArray(messages)) {
    const last = options.lastMessages ?? 3;
    out.messageCount = messages.length;
    out.lastMessages = last > 0 ? (sanitize(messages.slice(-last)) as unknown[]) : [];
  }
  return out;
}
