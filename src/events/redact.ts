/**
 * Secret redaction for everything agentloop writes where people or other programs read it: events on
 * the bus, debug lines, the audit log, and (through `Agent.redactor`) the persisted transcript.
 * See docs/reliability.md and docs/security.md.
 */

import { looksLikeSecret } from './secret-shape.js';

/** What a secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Patterns redacted by default: OpenAI-style keys (`sk-...`, `sk-proj-...`) and bearer tokens.
 * No anchors or look-behinds, so a match found in a stream's pending text is the match the whole
 * text has (the stream redactor relies on it).
 */
export const DEFAULT_SECRET_PATTERNS: readonly RegExp[] = [
  /sk-[A-Za-z0-9_-]{20,}/g,
  /Bearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
];

/** The shortest text each default pattern can match (`sk-` + 20; `Bearer` + a space + 8). */
const DEFAULT_MIN_MATCH = new Map<RegExp, number>([
  [DEFAULT_SECRET_PATTERNS[0]!, 23],
  [DEFAULT_SECRET_PATTERNS[1]!, 15],
]);

/** Options of `createRedactor`. */
export interface RedactorOptions {
  /**
   * Configured secrets: a string is replaced wherever it occurs (any length but empty), a RegExp
   * wherever it matches (the whole match is replaced; the `g` flag is added).
   */
  secrets?: readonly (string | RegExp)[];
  /**
   * Secret values known to the program (the API key given to `createAgent`; `OPENAI_API_KEY` is added
   * from `env`). They are redacted only when they look like keys (`looksLikeSecret`: 16 characters or
   * more, letters with digits or mixed case, 2.5 bits of entropy per character, not a placeholder), so
   * that a local server's `apiKey: 'scripted'` does not redact the word "scripted" everywhere.
   */
  knownSecrets?: readonly (string | null | undefined)[];
  /** Where `OPENAI_API_KEY` is read from (default `process.env`); `false` to skip it. */
  env?: Record<string, string | undefined> | false;
  /** Use `DEFAULT_SECRET_PATTERNS` (default true). */
  defaultPatterns?: boolean;
  /** Default `[REDACTED]`. */
  replacement?: string;
}

/** Redacts text held back while a stream is still arriving (see `Redactor.stream`). */
export interface StreamRedactor {
  /** Adds a delta; returns the redacted text that is safe to show now (possibly ''). */
  push(delta: string): string;
  /** Returns the rest, redacted, and starts over (the stream ended). */
  flush(): string;
  /** Drops the rest unseen (the stream was discarded). */
  discard(): void;
  /** Characters held back right now. */
  readonly pending: number;
}

/** Replaces secrets in text and in JSON-like values. */
export interface Redactor {
  /** `text` with every secret replaced. */
  redact(text: string): string;
  /**
   * A copy of `value` with every string in it redacted, object keys included (a redacted key that
   * meets another key gets a `#2`, `#3`, ... suffix, so no value is dropped); changed objects are
   * copied as plain objects, and parts without secrets (and the value itself, when it has none) are
   * returned as they are, not copied.
   */
  redactValue<T>(value: T): T;
  /** Whether `text` holds a secret. */
  contains(text: string): boolean;
  /**
   * A redactor for text that arrives in pieces (streamed content). A secret split across deltas is
   * still caught: text that could be the start of a secret is held back until it is decided. It holds
   * back the last two whitespace-separated words (secrets are single words, or two as in
   * `Bearer <token>`) and any suffix that starts a known secret string.
   */
  stream(): StreamRedactor;
  /**
   * Redacts `secret` from now on too, as a configured string secret is (a token obtained while the
   * agent runs: an MCP server's OAuth access and refresh tokens).
   */
  addSecret(secret: string): void;
  readonly replacement: string;
}

interface Span {
  start: number;
  end: number;
}

/**
 * What one redactor knows (its literal secrets, longest first, and its patterns) and the scans over
 * it. A class, so that an agent's redactor is one object and five small closures (the functions a
 * `Redactor` hands out), not a closure per helper: every agent holds one for its life.
 */
class SecretScanner {
  /** The literal secrets, longest first (a handful at most: a list, not a set). */
  #literalList: string[];
  readonly #regexes: RegExp[];
  /**
   * Text shorter than every secret can hold none: most strings of most events are that short, so
   * they skip the scans (a configured pattern's shortest match is unknown: it counts as 1).
   */
  #shortest: number;
  readonly replacement: string;

  constructor(literals: Set<string>, patterns: readonly RegExp[], replacement: string) {
    this.#literalList = [...literals].sort((a, b) => b.length - a.length);
    // The default patterns are shared by every redactor (`spans` resets lastIndex; matchAll works on a
    // copy); configured ones are copied, so a caller's RegExp is never touched.
    this.#regexes = patterns.map((p) =>
      DEFAULT_SECRET_PATTERNS.includes(p)
        ? p
        : new RegExp(p.source, p.flags.includes('g') ? p.flags : `${p.flags}g`),
    );
    this.#shortest = Math.min(
      ...this.#literalList.map((l) => l.length),
      ...patterns.map((p) => DEFAULT_MIN_MATCH.get(p) ?? 1),
      Number.POSITIVE_INFINITY,
    );
    this.replacement = replacement;
  }

  spans(text: string): Span[] {
    if (text.length < this.#shortest) return [];
    const found: Span[] = [];
    for (const literal of this.#literalList) {
      for (let at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + literal.length)) {
        found.push({ start: at, end: at + literal.length });
      }
    }
    for (const regex of this.#regexes) {
      regex.lastIndex = 0;
      for (const match of text.matchAll(regex)) {
        if (match[0].length > 0) found.push({ start: match.index, end: match.index + match[0].length });
      }
    }
    if (found.length < 2) return found;
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const merged: Span[] = [found[0]!];
    for (const span of found.slice(1)) {
      const last = merged[merged.length - 1]!;
      if (span.start <= last.end) last.end = Math.max(last.end, span.end);
      else merged.push(span);
    }
    return merged;
  }

  replace(text: string, found: readonly Span[], end = text.length): string {
    let out = '';
    let at = 0;
    for (const span of found) {
      if (span.end > end) break;
      out += text.slice(at, span.start) + this.replacement;
      at = span.end;
    }
    return out + text.slice(at, end);
  }

  redact(text: string): string {
    if (text.length === 0) return text;
    const found = this.spans(text);
    return found.length === 0 ? text : this.replace(text, found);
  }

  /** Length of the longest suffix of `text` that is a proper prefix of a literal secret. */
  literalHold(text: string): number {
    let hold = 0;
    for (const literal of this.#literalList) {
      for (let k = Math.min(literal.length - 1, text.length); k > hold; k--) {
        if (text.endsWith(literal.slice(0, k))) {
          hold = k;
          break;
        }
      }
    }
    return hold;
  }

  addSecret(secret: string): void {
    if (secret.length === 0 || this.#literalList.includes(secret)) return;
    this.#literalList = [...this.#literalList, secret].sort((a, b) => b.length - a.length);
    this.#shortest = Math.min(this.#shortest, secret.length);
  }
}

/** The text of one stream, held back until it is decided (see `Redactor.stream`). */
class HeldStream implements StreamRedactor {
  #pending = '';
  readonly #scanner: SecretScanner;

  constructor(scanner: SecretScanner) {
    this.#scanner = scanner;
  }

  push(delta: string): string {
    const scanner = this.#scanner;
    const pending = this.#pending + delta;
    const found = scanner.spans(pending);
    let end = Math.min(pending.length - scanner.literalHold(pending), lastTwoWordsStart(pending));
    for (const span of found) {
      // A match inside the held-back part, or reaching the end of the text, may still grow.
      if ((span.start < end && span.end > end) || (span.end >= pending.length && span.start < end)) {
        end = span.start;
      }
    }
    this.#pending = pending;
    if (end <= 0) return '';
    const out = scanner.replace(pending, found, end);
    this.#pending = pending.slice(end);
    return out;
  }

  flush(): string {
    const out = this.#scanner.redact(this.#pending);
    this.#pending = '';
    return out;
  }

  discard(): void {
    this.#pending = '';
  }

  get pending(): number {
    return this.#pending.length;
  }
}

/** Builds a redactor from known secrets (API keys), `OPENAI_API_KEY` and configured secrets and patterns. */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  const replacement = options.replacement ?? REDACTED;
  const env = options.env === false ? undefined : (options.env ?? process.env);
  const literals = new Set<string>();
  for (const value of [...(options.knownSecrets ?? []), env?.OPENAI_API_KEY]) {
    if (typeof value === 'string' && looksLikeSecret(value)) literals.add(value);
  }
  const patterns: RegExp[] = options.defaultPatterns === false ? [] : [...DEFAULT_SECRET_PATTERNS];
  for (const secret of options.secrets ?? []) {
    if (typeof secret === 'string') {
      if (secret.length > 0) literals.add(secret);
    } else {
      patterns.push(secret);
    }
  }
  const scanner = new SecretScanner(literals, patterns, replacement);
  const redact = (text: string): string => scanner.redact(text);
  return {
    redact,
    redactValue: <T>(value: T): T => walk(value, redact, new WeakSet()) as T,
    contains: (text) => scanner.spans(text).length > 0,
    stream: () => new HeldStream(scanner),
    addSecret: (secret) => scanner.addSecret(secret),
    replacement,
  };
}

/** Where the last two whitespace-separated words of `text` begin (the trailing one may be empty). */
function lastTwoWordsStart(text: string): number {
  let i = text.length;
  while (i > 0 && !isSpace(text.charCodeAt(i - 1))) i--;
  while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
  while (i > 0 && !isSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 160 || code === 0x2028 || code === 0x2029;
}

/** The key whose string value is opaque ciphertext, never redacted. */
const OPAQUE_KEY = 'encrypted_content';

function walk(value: unknown, redact: (text: string) => string, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], redact, seen);
      if (next !== value[i]) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    // Errors are common in events and logs: keep their message readable, without the secret.
    if (value instanceof Error) {
      const message = redact(value.message);
      if (message === value.message) return value;
      const copy = new Error(message);
      copy.name = value.name;
      return copy;
    }
    return value;
  }
  const entries = Object.entries(value);
  // Built from the first changed entry on; keys are redacted too (`{ "<key>": 1 }` as tool arguments).
  let changed: [string, unknown][] | undefined;
  let keysChanged = false;
  for (let i = 0; i < entries.length; i++) {
    const [key, item] = entries[i]!;
    const nextKey = redact(key);
    // Ciphertext (a Responses API reasoning item's) holds no readable secret and must stay byte-exact:
    // its URL-safe base64 can contain `sk-` and 20 more characters by chance.
    const next = key === OPAQUE_KEY && typeof item === 'string' ? item : walk(item, redact, seen);
    if (!changed && (nextKey !== key || next !== item)) changed = entries.slice(0, i);
    if (nextKey !== key) keysChanged = true;
    changed?.push([nextKey, next]);
  }
  if (!changed) return value;
  return Object.fromEntries(keysChanged ? withUniqueKeys(entries, changed) : changed);
}

/**
 * Keys that redact to the same text (two secrets, or a secret and a key already named `[REDACTED]`)
 * would silently drop values: keys that were not changed keep their names, and each changed key
 * that collides gets the first free `#2`, `#3`, ... suffix, in the object's order. `before` and
 * `after` are an object's entries before and after its keys were rewritten.
 */
export function withUniqueKeys(
  before: readonly [string, unknown][],
  after: readonly [string, unknown][],
): [string, unknown][] {
  const taken = new Set<string>();
  for (let i = 0; i < after.length; i++) if (after[i]![0] === before[i]![0]) taken.add(after[i]![0]);
  return after.map(([key, item], i) => {
    if (key === before[i]![0]) return [key, item];
    let name = key;
    for (let n = 2; taken.has(name); n++) name = `${key}#${n}`;
    taken.add(name);
    return [name, item];
  });
}
