import fc from 'fast-check';
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import {
  terminalSafe,
  terminalSafeEvents,
  terminalSafeJson,
  terminalSafeStream,
  terminalSafeValue,
} from '../src/cli/terminal/terminal-safe.js';
import { type AgentEvent, createRedactor, REDACTED } from '../src/index.js';
import { pushedInPieces } from './support/stream-pieces.js';

/** Issue 15: control sequences from the model or a tool never reach the terminal. See docs/security.md. */
const ESC = '\x1b';
const BEL = '\x07';
const ST = `${ESC}\\`;
/** ESC, and the C0/C1 controls a terminal acts on (tab and newline are text). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that must never be printed.
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('terminalSafe', () => {
  const cases: [string, string, string][] = [
    ['OSC 52 clipboard write (BEL)', `a${ESC}]52;c;ZWNobyBwd25lZA==${BEL}b`, 'ab'],
    ['OSC 52 clipboard write (ST)', `a${ESC}]52;c;ZWNobyBwd25lZA==${ST}b`, 'ab'],
    ['OSC 0 / OSC 2 title', `${ESC}]0;pwned${BEL}x${ESC}]2;pwned${ST}y`, 'xy'],
    ['OSC 8 link', `${ESC}]8;;https://evil.example${ST}click me${ESC}]8;;${ST}`, 'click me'],
    ['CSI 2J / 3J / H screen clear', `${ESC}[2J${ESC}[3J${ESC}[Hclean`, 'clean'],
    ['CSI cursor moves and private modes', `x${ESC}[5A${ESC}[?1049h${ESC}[?25l${ESC}[1;31my`, 'xy'],
    ['CSI colours in model text', `${ESC}[31mred${ESC}[0m`, 'red'],
    ['8-bit CSI', `a\x9b2Jb`, 'ab'],
    ['8-bit OSC with 8-bit ST', `a\x9d52;c;eA==\x9cb`, 'ab'],
    ['DCS', `a${ESC}Pq#0;2;0;0;0${ST}b`, 'ab'],
    ['SOS / PM / APC', `a${ESC}Xs${ST}${ESC}^p${ST}${ESC}_a${ST}b`, 'ab'],
    ['two-character escapes (RIS, DECSC, charset)', `a${ESC}c${ESC}7${ESC}(0b`, 'ab'],
    ['C0 controls (BEL, BS, CR, VT, FF, NUL, DEL)', `a\x07\x08\r\x0b\x0c\x00\x7fb`, 'ab'],
    ['other C1 controls (IND, NEL, RI)', 'a\x84\x85\x8db', 'ab'],
    ['a string cut by CAN', `a${ESC}]52;c;x\x18b`, 'ab'],
    ['unfinished CSI at the end', `text${ESC}[12`, 'text'],
    ['lone ESC at the end', `text${ESC}`, 'text'],
    ['unterminated OSC: only the introducer goes, its payload is shown', `a${ESC}]2;title`, 'a2;title'],
    ['ESC before a non-ASCII character', `a${ESC}éb`, 'aéb'],
  ];
  for (const [name, input, output] of cases) {
    it(name, () => {
      expect(terminalSafe(input)).toBe(output);
    });
  }

  it('keeps newlines, tabs, Unicode and emoji, and returns clean text as it is', () => {
    const text = 'line 1\n\tline 2 — ünïcödé 🧭 ✓';
    expect(terminalSafe(text)).toBe(text);
  });

  it('never lets ESC or a C0/C1 control through, whatever the input (property)', () => {
    const pieces = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom(
        ESC,
        `${ESC}[`,
        `${ESC}]`,
        `${ESC}P`,
        '\x9b',
        '\x9d',
        '\x9c',
        BEL,
        ST,
        '\r',
        '\x85',
        'J',
        ';',
        '\\',
      ),
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 20 }), (parts) => {
        const out = terminalSafe(parts.join(''));
        expect(out).not.toMatch(UNSAFE);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('terminalSafeStream', () => {
  it('gives, over any split of the text, what terminalSafe gives the whole (property)', () => {
    const pieces = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom(
        `${ESC}]52;c;aGk=${BEL}`,
        `${ESC}[2J`,
        `${ESC}]8;;u${ST}`,
        ESC,
        `${ESC}[`,
        '\x9d0;t',
        '\x9c',
        'x',
      ),
    );
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }),
        (parts, sizes) => {
          const text = parts.join('');
          const shown = pushedInPieces(terminalSafeStream(), text, sizes);
          expect(shown.join('')).toBe(terminalSafe(text));
          for (const piece of shown) expect(piece).not.toMatch(UNSAFE);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('terminalSafeValue, terminalSafeJson, terminalSafeEvents', () => {
  it('cleans strings and keys deep in a value; two keys that clean alike both stay', () => {
    const value = { path: 'safe.md', [`path${BEL}`]: '/etc/passwd', list: [`${ESC}[2Jx`], n: 1 };
    expect(terminalSafeValue(value)).toEqual({ path: 'safe.md', 'path#2': '/etc/passwd', list: ['x'], n: 1 });
    const clean = { a: ['b'] };
    expect(terminalSafeValue(clean)).toBe(clean);
  });

  it('writes DEL and C1 controls in JSON as escapes: the same value, nothing a terminal acts on', () => {
    const value = { text: `a\x9b2J${ESC}]0;t${BEL}\x7f` };
    const json = terminalSafeJson(value);
    expect(json).not.toMatch(UNSAFE);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('releases a held sequence before the next event, drops it on stream_reset, and redacts once clean', () => {
    const key = 'sk-proj-Zq4v9TcXw2LmN8bYr6HsK1fJ3dGpQ0aE';
    const safe = terminalSafeEvents(createRedactor({ knownSecrets: [key], env: false }));
    const meta = { sessionId: 's', turn: 1, iteration: 1, timestamp: 0 };
    const chunk = (delta: string): AgentEvent => ({ type: 'content_chunk', delta, ...meta });
    const deltas = (events: AgentEvent[]) =>
      events.map((e) => (e.type === 'content_chunk' ? e.delta : `<${e.type}>`)).join('');
    expect(deltas([...safe(chunk(`hi ${ESC}]52;c;`)), ...safe(chunk(`aGk=${BEL} there`))])).toBe('hi  there');
    expect(deltas(safe(chunk(`${ESC}]0;t`)))).toBe('');
    expect(deltas(safe({ type: 'stream_reset', reason: 'retry', attempt: 2, ...meta }))).toBe(
      '<stream_reset>',
    );
    expect(deltas(safe(chunk(`end ${ESC}]2;x`)))).toBe('end ');
    const [rest, error] = safe({
      type: 'error',
      message: `bad ${key.slice(0, 10)}${ESC}[0m${key.slice(10)}`,
      ...meta,
    });
    expect(deltas([rest!])).toBe('2;x');
    expect(error).toMatchObject({ type: 'error', message: `bad ${REDACTED}` });
  });

  it("leaves agentloop's own colours alone: they are added after the text is cleaned", () => {
    const colors = pc.createColors(true);
    const line = colors.red(`✗ ${terminalSafe(`${ESC}]52;c;eA==${BEL}boom`)}`);
    expect(line).toBe(`${ESC}[31m✗ boom${ESC}[39m`);
  });
});
