/** Braille frames, as most terminal spinners use. */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const INTERVAL_MS = 80;

/**
 * A one-line spinner drawn with `\r` and "erase line". Written by hand (a setInterval and two escape
 * codes) rather than taken from a library: the chat must own the line to interleave it with streamed
 * text, and the libraries hook the stream or the cursor in ways that fight readline. Does nothing when
 * disabled (not a terminal).
 */
export class Spinner {
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  #label: () => string = () => '';
  readonly #write: (text: string) => void;
  readonly #enabled: boolean;

  constructor(write: (text: string) => void, enabled: boolean) {
    this.#write = write;
    this.#enabled = enabled;
  }

  get active(): boolean {
    return this.#timer !== undefined;
  }

  /** Starts (or retargets) the spinner; `label` is called on every frame (elapsed times stay live). */
  start(label: () => string): void {
    this.#label = label;
    if (!this.#enabled) return;
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#draw(), INTERVAL_MS);
      this.#timer.unref();
    }
    this.#draw();
  }

  /** Erases the spinner line. */
  stop(): void {
    if (!this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#write('\r\x1b[2K');
  }

  #draw(): void {
    this.#frame = (this.#frame + 1) % FRAMES.length;
    this.#write(`\r\x1b[2K${FRAMES[this.#frame]} ${this.#label()}`);
  }
}

/** `1.2s`, `12.3s`, `2m05s`. */
export function formatElapsed(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
