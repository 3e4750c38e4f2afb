/** Lines kept of a stdio server's stderr. */
const STDERR_LINES = 20;

/** The last lines a stdio server wrote to its stderr (piped, never printed over the chat). */
export class StderrTail {
  readonly #lines: string[] = [];
  #partial = '';

  /** Adds a chunk as it arrives; lines and the partial last one are cut at 2,000 characters. */
  keep(chunk: string): void {
    const lines = (this.#partial + chunk).split(/\r?\n/);
    this.#partial = (lines.pop() ?? '').slice(-2_000);
    for (const line of lines) if (line.trim() !== '') this.#lines.push(line.slice(0, 2_000));
    if (this.#lines.length > STDERR_LINES) this.#lines.splice(0, this.#lines.length - STDERR_LINES);
  }

  /** The last `lines` lines, oldest first. */
  last(lines = 10): string[] {
    const all = this.#partial ? [...this.#lines, this.#partial] : this.#lines;
    return all.slice(-lines);
  }

  /** The note added to an error: the last five lines, or nothing. */
  note(): string {
    const tail = this.last(5);
    return tail.length > 0 ? `\nlast lines of its stderr:\n  ${tail.join('\n  ')}` : '';
  }
}
