import { execFileSync } from 'node:child_process';
import { cliPath } from './build-dist.js';

/** A tmux server of its own for one test file: panes run the built CLI, tests type and read screens. */
export class Tmux {
  readonly #socket: string;

  constructor(name: string) {
    this.#socket = `agentloop-${name}-${process.pid}`;
  }

  run(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.#socket, ...args], { encoding: 'utf8' });
  }

  /**
   * Starts `node dist/cli/main.js ...cliArgs` in a new `columns`x`rows` session (120x40 unless told)
   * without OpenAI variables;
   * the pane stays after the process ends and shows `[exit <code>]`.
   */
  start(
    name: string,
    cliArgs: string[],
    options: { cwd: string; env?: Record<string, string>; columns?: number; rows?: number },
  ): void {
    const vars = Object.entries({ OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ...options.env })
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(' ');
    const command = `env ${vars} node ${JSON.stringify(cliPath)} ${cliArgs.map((a) => JSON.stringify(a)).join(' ')}; echo "[exit $?]"; sleep 600`;
    this.run(
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      String(options.columns ?? 120),
      '-y',
      String(options.rows ?? 40),
      '-c',
      options.cwd,
      command,
    );
  }

  /** The screen and its scrollback, as text. */
  screen(name: string): string {
    return this.run('capture-pane', '-p', '-J', '-S', '-500', '-t', name);
  }

  /** Waits for `pattern` on the screen; generous, since it returns as soon as it matches (a loaded machine is slow). */
  async waitFor(name: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.screen(name);
      if (pattern.test(text)) return text;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${pattern} in pane ${name}:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Types a line and presses Enter. */
  type(name: string, text: string): void {
    this.run('send-keys', '-t', name, '-l', text);
    this.run('send-keys', '-t', name, 'Enter');
  }

  killServer(): void {
    try {
      this.run('kill-server');
    } catch {
      // no server left
    }
  }
}
