const DEFAULT_CHUNK_SIZE = 8;

/**
 * Splits text into pieces of `size` characters, never between the halves of a surrogate pair.
 * Without an explicit size, pieces are at most 8 characters and text of 2+ characters always
 * yields at least 2 pieces, so clients must reassemble even short replies.
 */
export function splitText(text: string, size: number | undefined): string[] {
  if (text.length === 0) return [];
  const step = size ?? Math.min(DEFAULT_CHUNK_SIZE, Math.ceil(text.length / 2));
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + step, text.length);
    const code = text.charCodeAt(end - 1);
    // Never split a surrogate pair: shorten the piece, or lengthen it when it would be empty.
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end += end - 1 > start ? -1 : 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
