import { type Redactor, withUniqueKeys } from '../../events/redact.js';
import type { AgentEvent } from '../../machines/emitted-events.js';

/**
 * Text the model or a tool wrote must not drive the terminal: an OSC 52 sequence writes the
 * clipboard, `CSI 2J` clears the screen, OSC 0/2 set the title, OSC 8 hides a link behind other text,
 * and any ESC / CSI / OSC / DCS sequence or C0/C1 control can move the cursor or rewrite what was
 * printed. The CLI prints such text through `terminalSafe`; its own colours (picocolors) are added
 * after, so they stay. See docs/security.md (Redaction and terminal output).
 */

/** What a terminal acts on: C0 controls but tab and newline, DEL, C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters to find.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
/** 8-bit CSI, ST, and the introducers of strings (DCS, SOS, OSC, PM, APC). */
const CSI8 = 0x9b;
const ST8 = 0x9c;
const STRING8 = new Set([0x90, 0x98, 0x9d, 0x9e, 0x9f]);
/** After ESC: CSI, and the 7-bit string introducers (OSC `]`, DCS `P`, SOS `X`, PM `^`, APC `_`). */
const STRING7 = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);

/** `text` without control sequences and control characters; newline and tab stay. */
export function terminalSafe(text: string): string {
  return CONTROL.test(text) ? scan(text, true).out : text;
}

/**
 * For text that arrives in pieces (streamed replies): a sequence split across deltas is held back
 * until it is complete, so the pieces give what `terminalSafe` gives the whole text.
 */
export interface TerminalSafeStream {
  /** Adds a delta; returns what is safe to print now (possibly ''). */
  push(delta: string): string;
  /** The text held back, made safe (the stream ended). */
  flush(): string;
  /** Drops the text held back (the stream was discarded). */
  discard(): void;
}

export function terminalSafeStream(): TerminalSafeStream {
  let pending = '';
  return {
    push(delta) {
      pending += delta;
      if (!CONTROL.test(pending)) {
        const out = pending;
        pending = '';
        return out;
      }
      const { out, held } = scan(pending, false);
      pending = pending.slice(held);
      return out;
    },
    flush() {
      const out = terminalSafe(pending);
      pending = '';
      return out;
    },
    discard() {
      pending = '';
    },
  };
}

/**
 * Reads `text` sequence by sequence, keeping printable text. A sequence still open at the end is
 * held back (`held` is where it starts) unless `final`: then an unfinished escape or CSI is dropped,
 * and of an unterminated string (OSC, DCS...) only the introducer, its payload shown as text.
 */
function scan(text: string, final: boolean): { out: string; held: number } {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code !== ESC && code !== CSI8 && !STRING8.has(code)) {
      if (!isControl(code)) out += text[i];
      i++;
      continue;
    }
    let body = i + 1;
    let kind: 'csi' | 'string' | 'escape' = code === CSI8 ? 'csi' : code === ESC ? 'escape' : 'string';
    if (code === ESC && body < text.length) {
      const next = text.charCodeAt(body);
      if (next === 0x5b) kind = 'csi';
      else if (STRING7.has(next)) kind = 'string';
      if (kind !== 'escape') body++;
    }
    const end =
      kind === 'csi' ? csiEnd(text, body) : kind === 'string' ? stringEnd(text, body) : escapeEnd(text, body);
    if (end >= 0) {
      i = end;
      continue;
    }
    if (!final) return { out, held: i };
    // Open at the end of the whole text: drop it, but show an unterminated string's payload.
    i = kind === 'string' ? body : text.length;
  }
  return { out, held: text.length };
}

function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);
}

/** After ESC: intermediates (0x20-0x2F), then a final byte (0x30-0x7E); other bytes end it early. -1: open. */
function escapeEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && text.charCodeAt(i) >= 0x20 && text.charCodeAt(i) <= 0x2f) i++;
  if (i >= text.length) return -1;
  const code = text.charCodeAt(i);
  return code >= 0x30 && code <= 0x7e ? i + 1 : i;
}

/** Parameters and intermediates (0x20-0x3F), then a final byte (0x40-0x7E); other bytes end it early. */
function csiEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && text.charCodeAt(i) >= 0x20 && text.charCodeAt(i) <= 0x3f) i++;
  if (i >= text.length) return -1;
  const code = text.charCodeAt(i);
  return code >= 0x40 && code <= 0x7e ? i + 1 : i;
}

/** A string runs to BEL, ST (`ESC \` or 0x9C), CAN or SUB; another ESC ends it too (and starts anew). */
function stringEnd(text: string, at: number): number {
  for (let i = at; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === BEL || code === ST8 || code === CAN || code === SUB) return i + 1;
    if (code === ESC) {
      if (i + 1 >= text.length) return -1;
      return text.charCodeAt(i + 1) === 0x5c ? i + 2 : i;
    }
  }
  return -1;
}

/** A copy of `value` with every string and object key made terminal-safe (unchanged parts are shared). */
export function terminalSafeValue<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return terminalSafe(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value.map(walk);
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const before = Object.entries(value);
  const after = before.map(([key, item]): [string, unknown] => [terminalSafe(key), walk(item)]);
  if (after.every(([key, item], i) => key === before[i]![0] && item === before[i]![1])) return value;
  // Two keys that differ only by control characters stay two keys (`#2`): none is hidden.
  return Object.fromEntries(withUniqueKeys(before, after));
}

/**
 * JSON for stdout: `JSON.stringify` escapes C0 controls but leaves DEL and C1 controls raw, and a
 * terminal may act on those; they are written as `\u00XX` escapes (the same JSON value).
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\x7f-\x9f]/g,
    (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
  );
}

/**
 * Makes the events a printer receives safe to print: every string and key through `terminalSafe`,
 * then through `redactor` again (a secret split by a control character is whole once the control
 * is gone); streamed text through one `terminalSafeStream`, its held end released before the next
 * event that is not a chunk and dropped on `stream_reset`.
 */
export function terminalSafeEvents(redactor?: Redactor): (event: AgentEvent) => AgentEvent[] {
  const stream = terminalSafeStream();
  let lastChunk: AgentEvent<'content_chunk'> | undefined;
  const clean = <T>(value: T): T => {
    const safe = terminalSafeValue(value);
    return redactor ? redactor.redactValue(safe) : safe;
  };
  return (event) => {
    if (event.type === 'content_chunk') {
      lastChunk = event;
      const delta = stream.push(event.delta);
      return delta ? [{ ...event, delta }] : [];
    }
    const out: AgentEvent[] = [];
    if (event.type === 'stream_reset') stream.discard();
    else if (lastChunk) {
      const rest = stream.flush();
      if (rest) out.push({ ...lastChunk, delta: rest });
    }
    lastChunk = undefined;
    out.push(clean(event));
    return out;
  };
}
