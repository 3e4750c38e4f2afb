import pc from 'picocolors';
import type { Redactor } from '../../events/redact.js';
import type { AgentEvent, ToolCallInfo } from '../../machines/emitted-events.js';
import { RESET_NOTE, retryNote } from '../terminal/event-printer.js';
import { planChecklist } from '../terminal/plan-checklist.js';
import { displayWidth, ellipsize, stripColors, wrapLine, wrapText } from '../terminal/terminal-layout.js';
import { terminalSafe, terminalSafeEvents } from '../terminal/terminal-safe.js';
import { formatElapsed, Spinner } from './chat-spinner.js';
import {
  fitArgument,
  fitToolLine,
  MAX_ARGUMENT_COLUMNS,
  mainArgumentText,
  type PathView,
  shownPath,
  summarize,
} from './chat-tool-lines.js';

/** picocolors' formatter set, on or off. */
export type Colors = ReturnType<typeof pc.createColors>;

/** Colours only for a terminal, and never with NO_COLOR set (https://no-color.org). */
export function chatColors(terminal: boolean, env: NodeJS.ProcessEnv = process.env): Colors {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return pc.createColors(terminal && !noColor && env.TERM !== 'dumb');
}

export interface ChatRendererOptions {
  write: (text: string) => void;
  /** A terminal: spinners and in-place updates. */
  terminal: boolean;
  colors: Colors;
  /** Shown before the agent's replies, e.g. `🧭 Iris`. */
  agentLabel: string;
  /** Paths under it are shown relative to it. */
  projectRoot?: string;
  columns?: () => number;
}

/**
 * Draws one chat session's events: the reply streamed as it arrives, a spinner with the tool name,
 * its main argument and the elapsed time while tools run, one line per result, the iteration count
 * once it passes the warning level, warnings and errors. In a terminal every line is word-wrapped
 * to its width (read at each line: resizes count) and tool lines are fitted to one row.
 */
export class ChatRenderer {
  readonly c: Colors;
  readonly #o: ChatRendererOptions;
  readonly #spinner: Spinner;
  /** Text was written without its newline yet. */
  #midLine = false;
  /** Column of the cursor in streamed text (for word wrapping). */
  #column = 0;
  /** Streamed text not written yet: the word being streamed, and the spaces before it. */
  #word = '';
  #space = '';
  /** How paths in calls are shown (variables filled once a bundle agent is known). */
  #paths: PathView;
  #replying = false;
  #thinkingSince: number | undefined;
  readonly #running = new Map<string, { call: ToolCallInfo; since: number }>();
  /** The iteration count is shown once the model has been warned that the limit nears. */
  #showIterations = false;
  /** The plan last drawn (JSON), so that an unchanged plan is not drawn again. */
  #lastPlan: string | undefined;
  /** Events as printed: without control sequences, redacted once more (see `useRedactor`). */
  #safe = terminalSafeEvents();

  constructor(options: ChatRendererOptions) {
    this.#o = { ...options, agentLabel: terminalSafe(options.agentLabel) };
    this.c = options.colors;
    this.#spinner = new Spinner((text) => options.write(text), options.terminal);
    this.#paths = options.projectRoot ? { projectRoot: options.projectRoot } : {};
  }

  /** Columns a line may fill: one short of the terminal's width (see terminal/terminal-layout.ts). */
  get width(): number {
    return Math.max(20, (this.#o.columns?.() ?? 80) - 1);
  }

  /** Writes whole lines, ending any streamed text first; in a terminal they are word-wrapped. */
  line(text = ''): void {
    this.#spinner.stop();
    this.endLine();
    this.#o.write(`${this.#o.terminal ? wrapText(text, this.width) : text}\n`);
    this.#resumeSpinner();
  }

  /** Writes a line never wrapped (one holding a link to open: a wrapped link cannot be copied whole). */
  unwrappedLine(text: string): void {
    this.#spinner.stop();
    this.endLine();
    this.#o.write(`${text}\n`);
    this.#resumeSpinner();
  }

  /** One line wrapped with its continuation rows at `hang` columns (e.g. under a value, after its key). */
  hangingLine(text: string, hang: number): void {
    this.line(this.#o.terminal ? wrapLine(text, this.width, hang).join('\n') : text);
  }

  /** Fills path variables (`{output_folder}`, ...) in the calls shown, as the session's tools do. */
  usePathVariables(resolve: ((value: string) => string) | undefined): void {
    this.#paths = {
      ...(this.#o.projectRoot ? { projectRoot: this.#o.projectRoot } : {}),
      ...(resolve ? { resolve } : {}),
    };
  }

  /** A value as a tool will use it: path variables filled and relative to the project (other values as they are). */
  shownPath(value: string): string {
    return shownPath(value, this.#paths);
  }

  /** The current session's redactor: events are redacted again once control characters are gone. */
  useRedactor(redactor: Redactor): void {
    this.#safe = terminalSafeEvents(redactor);
  }

  /** A labelled paragraph (`you ›`, `Iris ›`), word-wrapped like streamed replies; `text` is made terminal-safe. */
  say(label: string, text: string): void {
    this.#spinner.stop();
    this.endLine();
    this.#o.write(`${label} `);
    this.#column = displayWidth(label) + 1;
    this.#midLine = true;
    this.#writeWrapped(terminalSafe(text));
    this.endLine();
  }

  /** Ends a line of streamed text. */
  endLine(): void {
    this.#flushWord();
    if (this.#midLine) this.#o.write('\n');
    this.#midLine = false;
    this.#column = 0;
    this.#space = '';
  }

  /** Stops the spinner before a prompt takes the line. */
  pause(): void {
    this.#spinner.stop();
    this.endLine();
  }

  /** A turn begins: the agent is about to think. */
  turnStarted(): void {
    this.#showIterations = false;
    this.#replying = false;
  }

  /** The main argument of a call for one line (a path relative to the project, a URL, a query...), cut to `max` columns. */
  mainArgument(args: unknown, max = MAX_ARGUMENT_COLUMNS): string {
    return fitArgument(mainArgumentText(args, this.#paths), max);
  }

  /** Draws an event; what the model and tools wrote in it is printed without control sequences. */
  handle(event: AgentEvent): void {
    for (const clean of this.#safe(event)) this.#draw(clean);
  }

  #draw(event: AgentEvent): void {
    const { c } = this;
    switch (event.type) {
      case 'state_change':
        if (event.state === 'Thinking') {
          this.#replying = false;
          this.#thinkingSince = Date.now();
          this.#resumeSpinner();
        } else {
          this.#thinkingSince = undefined;
          if (this.#running.size === 0) this.#spinner.stop();
        }
        break;
      case 'iteration':
        if (this.#showIterations)
          this.line(c.dim(`· model call ${event.iteration} of ${event.maxIterations}`));
        break;
      case 'content_chunk': {
        this.#spinner.stop();
        this.#thinkingSince = undefined;
        if (!this.#replying) {
          this.endLine();
          this.#o.write(`${c.bold(c.cyan(`${this.#o.agentLabel} ›`))} `);
          this.#column = displayWidth(this.#o.agentLabel) + 3;
          this.#midLine = true;
          this.#replying = true;
        }
        this.#writeWrapped(event.delta);
        break;
      }
      case 'retry':
        this.line(c.yellow(`↻ ${retryNote(event)}`));
        break;
      case 'stream_reset':
        // Said only when part of a reply was shown; the retry line said why the model is asked again.
        if (this.#replying) this.line(c.yellow(RESET_NOTE));
        this.#replying = false;
        break;
      case 'tool_call_start':
        this.#running.set(event.toolCallId, { call: event, since: Date.now() });
        this.#spinner.stop();
        this.endLine();
        this.#replying = false;
        if (!this.#o.terminal) this.#o.write(`${c.dim('…')} ${this.#toolText(event, '…', '').text}\n`);
        this.#resumeSpinner();
        break;
      case 'tool_call_end': {
        const running = this.#running.get(event.toolCallId);
        this.#running.delete(event.toolCallId);
        const took = formatElapsed(running ? Date.now() - running.since : event.durationMs);
        if (event.error !== undefined) {
          const { head, detail } = this.#toolText(event, '✗', ' ', took, event.error);
          this.line(`${c.red('✗')} ${head} ${c.dim(took)}${detail ? ` ${c.red(detail)}` : ''}`);
        } else if (event.result?.startsWith('The user declined')) {
          const reason = / Reason: (.*?) Do not retry/.exec(event.result)?.[1];
          const { head, detail } = this.#toolText(
            event,
            '⊘',
            ' ',
            undefined,
            `declined${reason ? `: ${reason}` : ''}`,
          );
          this.line(`${c.yellow('⊘')} ${head} ${c.yellow(detail ?? 'declined')}`);
        } else {
          const argument = mainArgumentText(event.args, this.#paths);
          const result = summarize(event.result, argument, this.#paths);
          const { head, detail } = this.#toolText(event, '✓', ' → ', took, result);
          this.line(`${c.green('✓')} ${head} ${c.dim(took)}${detail ? ` ${c.dim('→')} ${detail}` : ''}`);
        }
        break;
      }
      case 'plan_updated': {
        // Shown when it changes: a call that sends the same plan again draws nothing.
        const shown = JSON.stringify(event.plan);
        if (shown === this.#lastPlan) break;
        this.#lastPlan = shown;
        for (const text of planChecklist(event.plan, c)) this.line(text);
        break;
      }
      case 'limit_warning':
        if (event.limit === 'max_iterations') this.#showIterations = true;
        this.line(c.yellow(`! ${event.message}`));
        break;
      case 'context_pruned':
        this.line(
          c.dim(`· older tool results pruned to fit the context window (${event.removedTokens} tokens)`),
        );
        break;
      case 'context_compacted':
        this.line(
          c.dim(
            `· compacted: ${event.entriesCovered} earlier messages summarized (${event.tokensBefore} → ${event.tokensAfter} tokens)`,
          ),
        );
        break;
      case 'error':
        this.line(c.red(`error: ${event.message}`));
        break;
      case 'turn_end':
        this.#spinner.stop();
        // Calls cut off by an interrupt get no end event of their own.
        for (const { call, since } of this.#running.values()) {
          const took = formatElapsed(Date.now() - since);
          const { head } = this.#toolText(call, '✗', ' ', took, 'interrupted');
          this.line(`${c.red('✗')} ${head} ${c.dim(took)} ${c.red('interrupted')}`);
        }
        this.#running.clear();
        this.#thinkingSince = undefined;
        this.endLine();
        break;
      default:
        break;
    }
  }

  /**
   * `name argument` of a tool line (terminal-safe), with its detail, fitted to one row: `mark` and
   * `separator` (before the detail) and the time take their room first.
   */
  #toolText(
    call: Pick<ToolCallInfo, 'name' | 'args'>,
    mark: string,
    separator: string,
    took?: string,
    detail?: string,
  ): { head: string; detail: string | undefined; text: string } {
    const name = terminalSafe(call.name);
    const fitted = fitToolLine(
      {
        name,
        argument: mainArgumentText(call.args, this.#paths),
        ...(took ? { took } : {}),
        ...(detail !== undefined ? { detail: terminalSafe(detail) } : {}),
        extra: displayWidth(mark) + 1 + (detail !== undefined ? displayWidth(separator) : 0),
      },
      this.width,
    );
    const head = `${name}${fitted.argument ? ` ${fitted.argument}` : ''}`;
    return { head, detail: fitted.detail, text: head };
  }

  /**
   * Streams text, breaking lines between words at the terminal width (only in a terminal). A word is
   * held until it ends (deltas split words anywhere), then written on this row or the next; a word
   * wider than a row is broken.
   */
  #writeWrapped(delta: string): void {
    if (!this.#o.terminal) {
      this.#o.write(delta);
      this.#midLine = !delta.endsWith('\n');
      return;
    }
    for (const part of delta.split(/([ \t\n])/)) {
      if (part === '') continue;
      if (part === '\n') {
        this.#flushWord();
        this.#o.write('\n');
        this.#column = 0;
        this.#space = '';
        this.#midLine = false;
      } else if (part === ' ' || part === '\t') {
        this.#flushWord();
        this.#space += ' ';
      } else {
        this.#word += part;
        this.#midLine = true;
      }
    }
  }

  /** Writes the word held back, on a new row when it does not fit on this one. */
  #flushWord(): void {
    const word = this.#word;
    if (!word) return;
    this.#word = '';
    const width = this.width;
    let space = this.#space;
    this.#space = '';
    if (this.#column > 0 && this.#column + space.length + displayWidth(word) > width) {
      this.#o.write('\n');
      this.#column = 0;
      space = '';
    }
    if (this.#column + space.length + displayWidth(word) > width) space = '';
    const rows = wrapLine(`${' '.repeat(this.#column)}${space}${word}`, width, 0);
    rows[0] = rows[0]!.slice(this.#column);
    this.#o.write(rows.join('\n'));
    this.#column = displayWidth(rows.length > 1 ? rows.at(-1)! : `${' '.repeat(this.#column)}${rows[0]}`);
    this.#midLine = true;
  }

  #resumeSpinner(): void {
    const label = this.#spinnerLabel();
    if (label) this.#spinner.start(() => this.#fit(this.#spinnerLabel() ?? ''));
  }

  #spinnerLabel(): string | undefined {
    const { c } = this;
    const hint = '  (Ctrl+C to stop)';
    // The frame and its space take two columns.
    const width = this.width - 2;
    if (this.#running.size > 0) {
      const [first, ...more] = [...this.#running.values()];
      const name = terminalSafe(first!.call.name);
      const took = formatElapsed(Date.now() - first!.since);
      const extra = more.length > 0 ? ` +${more.length} more` : '';
      const argument = mainArgumentText(first!.call.args, this.#paths);
      const fitted = (withHint: boolean) =>
        fitToolLine(
          { name, argument, took, extra: displayWidth(extra) + (withHint ? hint.length : 0) },
          width,
        ).argument;
      let shown = fitted(true);
      const withHint = shown === argument || displayWidth(shown) >= 24 || !argument;
      if (!withHint) shown = fitted(false);
      return `${c.cyan(name)}${shown ? ` ${shown}` : ''}${c.dim(extra)} ${c.dim(took)}${withHint ? c.dim(hint) : ''}`;
    }
    if (this.#thinkingSince !== undefined) {
      const took = formatElapsed(Date.now() - this.#thinkingSince);
      const text = `${this.#o.agentLabel} is thinking ${took}`;
      return `${ellipsize(text, width)}${displayWidth(text) + hint.length <= width ? c.dim(hint) : ''}`;
    }
    return undefined;
  }

  /** Cuts the spinner line to the terminal width (a wrapped line cannot be erased with `\r`). */
  #fit(text: string): string {
    const width = this.width - 2;
    if (displayWidth(text) <= width) return text;
    return ellipsize(stripColors(text), width);
  }
}
