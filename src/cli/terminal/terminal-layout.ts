/**
 * Text laid out for a terminal of a given width: display widths (wide characters and emoji take two
 * columns, combining marks none, colour codes none), word wrapping with hanging indents, one-line
 * previews with a single ellipsis, and paths shortened from the left. The chat wraps its own lines
 * one column short of the width: a line that fills the last column leaves the cursor in the
 * terminal's pending-wrap state, and readline's arithmetic and `\r` redraws go wrong from there.
 */

/** SGR sequences (picocolors' colours): measured as nothing, carried over line breaks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are measured out.
const SGR = /\x1b\[[0-9;]*m/g;
const ELLIPSIS = '…';

/** Columns one character takes in a terminal. */
function charWidth(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f) || /\p{M}/u.test(ch)) return 0;
  if (cp >= 0x1f000 && /\p{Extended_Pictographic}/u.test(ch)) return 2;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** The text without colour codes. */
export function stripColors(text: string): string {
  return text.replace(SGR, '');
}

/** Columns `text` takes on one line (colour codes take none). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of stripColors(text)) width += charWidth(ch);
  return width;
}

/** The longest start of `text` (no colour codes) that fits in `width` columns. */
function fitStart(text: string, width: number): string {
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = charWidth(ch);
    if (used + w > width) break;
    out += ch;
    used += w;
  }
  return out;
}

/** The longest end of `text` (no colour codes) that fits in `width` columns. */
function fitEnd(text: string, width: number): string {
  const chars = Array.from(text);
  let used = 0;
  let start = chars.length;
  while (start > 0 && used + charWidth(chars[start - 1]!) <= width) used += charWidth(chars[--start]!);
  return chars.slice(start).join('');
}

/**
 * `text` on one line in at most `max` columns: whitespace runs become one space, and what does not
 * fit is replaced by one `…` (an ellipsis already at the cut is not doubled).
 */
export function ellipsize(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (displayWidth(flat) <= max) return flat;
  if (max < 1) return '';
  let kept = fitStart(flat, max - 1);
  // Cut between words when a word boundary is near.
  const space = kept.lastIndexOf(' ');
  if (flat[kept.length] !== ' ' && space > 0 && kept.length - space <= 12) kept = kept.slice(0, space);
  return `${kept.replace(/[\s.…,;:]+$/u, '')}${ELLIPSIS}`;
}

/** A preview that says it is one: `text` cut to `max` columns, ending in one `…` when anything was left out. */
export function preview(text: string, max: number, cut: boolean): string {
  const shown = ellipsize(text, max);
  if (!cut || shown.endsWith(ELLIPSIS)) return shown;
  const room = fitStart(shown, max - 1).replace(/[\s.…]+$/u, '');
  return `${room}${ELLIPSIS}`;
}

/**
 * A path in at most `max` columns, keeping its end (the file name says most): leading folders are
 * replaced by `…/`; a file name too long on its own keeps its start and its end (`intake-sup…-23.md`).
 */
export function shortenPath(value: string, max: number): string {
  if (displayWidth(value) <= max) return value;
  if (max < 2) return ELLIPSIS;
  const parts = value.split(/[\\/]/);
  let tail = parts.pop() ?? '';
  for (let i = parts.length - 1; i >= 0; i--) {
    const longer = `${parts[i]}/${tail}`;
    if (displayWidth(`${ELLIPSIS}/${longer}`) > max) break;
    tail = longer;
  }
  if (displayWidth(`${ELLIPSIS}/${tail}`) <= max) return `${ELLIPSIS}/${tail}`;
  if (displayWidth(tail) <= max) return tail;
  // Only the file name, cut in its middle so its start and its extension stay.
  const room = max - 1;
  const end = fitEnd(tail, Math.max(1, Math.floor(room * 0.4)));
  const start = fitStart(tail, room - displayWidth(end));
  return `${start}${ELLIPSIS}${end}`;
}

/** Whether a value looks like a path (no spaces, a slash, or a file extension). */
export function looksLikePath(value: string): boolean {
  return !/\s/.test(value) && (/[\\/]/.test(value) || /\.[A-Za-z0-9]{1,6}$/.test(value));
}

/** Colour codes still open at the end of `text` (closed ones removed), in order. */
function openColors(text: string, open: string[]): string[] {
  const closes: Record<string, RegExp> = {
    '0': /.*/,
    '22': /^(1|2)$/,
    '23': /^3$/,
    '24': /^4$/,
    '27': /^7$/,
    '28': /^8$/,
    '29': /^9$/,
    '39': /^(3[0-8]|9[0-7])(;|$)/,
    '49': /^(4[0-8]|10[0-7])(;|$)/,
  };
  let active = [...open];
  for (const [code] of text.matchAll(SGR)) {
    const params = code.slice(2, -1) || '0';
    const close = closes[params];
    if (close) active = active.filter((c) => !close.test(c.slice(2, -1)));
    else active.push(code);
  }
  return active;
}

/**
 * The indent of a line's continuation rows: its leading spaces, and after a list marker (`1. `,
 * `- `), a key (`path: `, with `keyHang`) or a term followed by two spaces (`/help    this list`),
 * the column its text starts at.
 */
export function hangingIndent(line: string, keyHang = false): number {
  const plain = stripColors(line);
  const marker =
    /^(\s*(?:\d+[.)]|[-*•?]) +)/.exec(plain) ??
    /^(\s*\S+ {2,})(?=\S)/.exec(plain) ??
    (keyHang ? /^(\s*[\w-]+: )/.exec(plain) : null) ??
    /^(\s*)/.exec(plain);
  return displayWidth(marker?.[1] ?? '');
}

/**
 * Splits a word too long for its row into pieces: the first fits in `first` columns, the others in
 * `later`; breaks come after `/`, `-` or `_` where one is in the second half of a piece.
 */
function breakWord(word: string, first: number, later: number): string[] {
  const pieces: string[] = [];
  let rest = word;
  let room = first;
  while (displayWidth(rest) > room) {
    let head = fitStart(rest, room);
    const soft = Math.max(head.lastIndexOf('/'), head.lastIndexOf('-'), head.lastIndexOf('_'));
    if (soft >= head.length / 2) head = head.slice(0, soft + 1);
    if (head === '') head = Array.from(rest)[0]!;
    pieces.push(head);
    rest = rest.slice(head.length);
    room = later;
  }
  pieces.push(rest);
  return pieces;
}

/**
 * Word-wraps one line (it may carry colour codes) to `width` columns. Continuation rows start at
 * `hang` columns (default: {@link hangingIndent}); a word longer than a row is broken. Colours open
 * at a break are closed before it and opened again after the indent, so every row stands alone.
 */
export function wrapLine(line: string, width: number, hang = hangingIndent(line)): string[] {
  if (displayWidth(line) <= width) return [line];
  const indent = ' '.repeat(Math.min(hang, Math.max(0, width - 10)));
  const rows: string[] = [];
  let row = '';
  let rowWidth = 0;
  let colors: string[] = [];
  let pendingSpace = '';
  /** The row holds a word (not only its indent). */
  let hasWord = false;
  const newRow = () => {
    colors = openColors(row, colors);
    rows.push(colors.length > 0 ? `${row}\x1b[0m` : row);
    row = indent + colors.join('');
    rowWidth = indent.length;
    pendingSpace = '';
    hasWord = false;
  };
  // Leading spaces belong to the first row; after that, words and the spaces between them.
  const leading = /^( *)/.exec(stripColors(line))?.[1] ?? '';
  let rest = line;
  if (leading && line.startsWith(leading)) {
    row = leading;
    rowWidth = leading.length;
    rest = line.slice(leading.length);
  }
  for (const token of rest.split(/( +)/)) {
    if (token === '') continue;
    if (/^ +$/.test(token)) {
      pendingSpace += token;
      continue;
    }
    const wordWidth = displayWidth(token);
    if (rowWidth + pendingSpace.length + wordWidth <= width) {
      row += pendingSpace + token;
      rowWidth += pendingSpace.length + wordWidth;
      pendingSpace = '';
      hasWord = true;
      continue;
    }
    // A word that fits on a row of its own goes to the next; a longer one (a path, a URL) starts
    // here when a good part of it fits, and is broken.
    const later = width - indent.length;
    if (hasWord && (wordWidth <= later || width - rowWidth - pendingSpace.length < 12)) newRow();
    if (hasWord) {
      row += pendingSpace;
      rowWidth += pendingSpace.length;
    }
    pendingSpace = '';
    const room = width - rowWidth;
    const pieces = wordWidth > room ? breakWord(stripColors(token), room, later) : [token];
    // Colour codes inside a broken word are dropped: long words are paths and URLs, printed plain.
    pieces.forEach((piece, i) => {
      if (i > 0) newRow();
      row += piece;
      rowWidth += displayWidth(piece);
    });
    hasWord = true;
  }
  rows.push(row);
  return rows.map((r) => r.replace(/ +$/, ''));
}

/** Word-wraps every line of `text` to `width` columns (see {@link wrapLine}). */
export function wrapText(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width).join('\n'))
    .join('\n');
}
