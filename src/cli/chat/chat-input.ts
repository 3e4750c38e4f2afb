import { createInterface, type Interface } from 'node:readline';
import { Writable } from 'node:stream';
import { displayWidth, wrapLine } from '../terminal/terminal-layout.js';

/** Columns a wrapped prompt leaves free on its last row for the answer. */
const ANSWER_ROOM = 10;

/** The streams a chat reads and writes. */
export interface ChatStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { columns?: number; isTTY?: boolean };
  /** A terminal: line editing, history, Ctrl+C as a key. Otherwise lines are read as they come (pipes, CI). */
  terminal: boolean;
}

/**
 * Line input for the chat, on node:readline. Every line entered goes into a queue, so lines typed
 * (or piped) while the agent works are answers to the next prompts, in order. While the agent works
 * the echo is muted, so typing never garbles the streamed reply; text typed then without Enter
 * appears after the next prompt, to be finished there. Ctrl+C calls `onInterrupt` (a key in
 * a terminal, SIGINT otherwise); at a prompt with text on the line it clears the line instead.
 *
 * In a terminal, a prompt wider than the terminal is word-wrapped: its rows but the last are printed,
 * and readline gets only the last one (readline redraws its prompt with relative cursor moves, and
 * a prompt that wraps leaves it a row off). An answer the terminal wrapped is printed again,
 * word-wrapped, once entered.
 */
export class ChatInput {
  /** Called on Ctrl+C (unless it only cleared the line being typed). */
  onInterrupt: () => void = () => {};
  /** Called when a line arrives while no prompt waits (the chat checks it for `/stop`). */
  onLineWhileBusy: () => void = () => {};
  readonly #rl: Interface;
  readonly #streams: ChatStreams;
  readonly #queue: string[] = [];
  #waiter: ((line: string | null) => void) | undefined;
  #closed = false;
  #muted = true;
  /** The prompt readline shows now (the last row of the one asked). */
  #shownPrompt = '';
  readonly #onSigint = () => this.onInterrupt();

  constructor(streams: ChatStreams) {
    this.#streams = streams;
    const self = this;
    const target = streams.output;
    // readline writes its echo here; muted while the agent works.
    const output = new Writable({
      write(chunk, encoding, callback) {
        if (!self.#muted) target.write(chunk, encoding);
        callback();
      },
    }) as Writable & { columns?: number; isTTY?: boolean };
    Object.defineProperty(output, 'columns', { get: () => target.columns ?? 80 });
    output.isTTY = streams.terminal;
    this.#rl = createInterface({
      input: streams.input,
      output,
      terminal: streams.terminal,
      historySize: 200,
      prompt: '',
    });
    this.#rl.on('line', (line) => this.#push(line));
    this.#rl.on('close', () => {
      this.#closed = true;
      this.#waiter?.(null);
      this.#waiter = undefined;
    });
    if (streams.terminal) {
      this.#rl.on('SIGINT', () => {
        if (!this.#muted && this.#rl.line.length > 0) {
          this.#clearLine();
          target.write('\n');
          this.#rl.setPrompt(this.#shownPrompt);
          this.#rl.prompt(true);
          return;
        }
        this.onInterrupt();
      });
    } else {
      process.on('SIGINT', this.#onSigint);
    }
  }

  /** Whether input has ended (Ctrl+D, the pipe closed). */
  get closed(): boolean {
    return this.#closed && this.#queue.length === 0;
  }

  /** Shows `prompt` and resolves with the next line, or null when input has ended. */
  question(prompt: string): Promise<string | null> {
    const { terminal, output } = this.#streams;
    const queued = this.#queue.shift();
    if (queued !== undefined) {
      // Typed ahead (hidden) or piped: show it after the prompt as if typed now.
      output.write(`${terminal ? this.#wrap(`${prompt}${queued}`).join('\n') : `${prompt}${queued}`}\n`);
      return Promise.resolve(queued);
    }
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.#waiter = (line) => {
        this.#muted = true;
        if (line !== null && !terminal) output.write(`${prompt}${line}\n`);
        if (line !== null && terminal) this.#rewrapAnswer(line);
        resolve(line);
      };
      if (terminal) {
        // Text typed (hidden) while the agent worked, without Enter yet: shown after the prompt, to go on.
        const typed = this.#rl.line;
        // Forget the last prompt first: readline moves up as many rows as it drew for it.
        this.#rl.setPrompt('');
        this.#clearLine();
        // The last row keeps room for a short answer.
        const rows = wrapLine(prompt.trimEnd(), this.#width - ANSWER_ROOM);
        this.#shownPrompt = `${rows.pop()}${prompt.slice(prompt.trimEnd().length)}`;
        if (rows.length > 0) output.write(`${rows.join('\n')}\n`);
        this.#muted = false;
        this.#rl.setPrompt(this.#shownPrompt);
        this.#rl.prompt();
        if (typed) this.#rl.write(typed);
      }
    });
  }

  /** Columns a line may fill: one short of the terminal's width. */
  get #width(): number {
    return Math.max(20, (this.#streams.output.columns ?? 80) - 1);
  }

  #wrap(text: string): string[] {
    return wrapLine(text, this.#width);
  }

  /**
   * The terminal wrapped the answer just entered wherever the row ended: print it again,
   * word-wrapped, over the rows readline drew (when they are all still on the screen).
   */
  #rewrapAnswer(line: string): void {
    const echoed = `${this.#shownPrompt}${line}`;
    const width = displayWidth(echoed);
    if (width <= this.#width) return;
    const columns = this.#streams.output.columns ?? 80;
    const rows = Math.ceil(width / columns);
    const screenRows = (this.#streams.output as { rows?: number }).rows ?? 24;
    if (rows >= screenRows) return;
    this.#streams.output.write(`\x1b[${rows}A\r\x1b[J${this.#wrap(echoed).join('\n')}\n`);
  }

  /**
   * Writes lines (`write`) that arrive while the user types at a prompt (an MCP server signed in) above
   * that prompt: the row being typed is cleared, the lines written, and the prompt shown again with
   * what was typed, the cursor where it was. Otherwise `write` runs as it is.
   */
  above(write: () => void): void {
    if (!this.#streams.terminal || this.#muted || !this.#waiter) {
      write();
      return;
    }
    this.#streams.output.write('\r\x1b[2K');
    write();
    this.#rl.prompt(true);
  }

  /** Ends the prompt being shown: its `question` resolves with null (Ctrl+C on an empty line). */
  cancel(): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    this.#waiter = undefined;
    if (this.#streams.terminal) this.#streams.output.write('\n');
    waiter(null);
  }

  /** The next queued line, without waiting (lines entered while the agent worked). */
  peek(): string | undefined {
    return this.#queue[0];
  }

  /** Removes the next queued line. */
  shift(): string | undefined {
    return this.#queue.shift();
  }

  close(): void {
    process.off('SIGINT', this.#onSigint);
    this.#rl.close();
  }

  #push(line: string): void {
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter(line);
      return;
    }
    this.#queue.push(line);
    this.onLineWhileBusy();
  }

  /** Empties readline's line (the caller keeps what it needs of it). */
  #clearLine(): void {
    const muted = this.#muted;
    this.#muted = true;
    this.#rl.write(null, { ctrl: true, name: 'e' });
    this.#rl.write(null, { ctrl: true, name: 'u' });
    this.#muted = muted;
  }
}
