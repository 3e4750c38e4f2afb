/**
 * What a text filter's stream (`push` a piece, `flush` at the end) shows for `text` pushed in pieces
 * of `sizes` (taken in turn, from the first again when they run out): each push's output, then the
 * flush's. For property tests that a stream shows what the whole text would.
 */
export function pushedInPieces(
  stream: { push(piece: string): string; flush(): string },
  text: string,
  sizes: readonly number[],
): string[] {
  const shown: string[] = [];
  let at = 0;
  for (let i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]!;
    shown.push(stream.push(text.slice(at, at + size)));
    at += size;
  }
  shown.push(stream.flush());
  return shown;
}
