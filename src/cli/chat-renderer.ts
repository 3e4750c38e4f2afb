import path from 'node:path';
import pc from 'picocolors';
import type { Redactor } from '../events/redact.js';
import type { AgentEvent, ToolCallInfo } from '../machines/emitted-events.js';
import { formatElapsed, Spinner } from './chat-spinner.js';
import { oneLine, RESET_NOTE, retryNote } from './event-printer.js';
import { planChecklist } from './plan-checklist.js';
import { terminalSafe, terminalSafeEvents } from './terminal-safe.js';

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

/** Argument names that usually say what a call is about, in order of preference. */
const MAIN_ARGS = ['file_path', 'path', 'workflow_path', 'url', 'query', 'command', 'name', 'text'];

/**
 * Draws one chat session's events: the reply streamed as it arrives, a spinner with the tool name,
 * its main argument and the elapsed time while tools run, one line per result, the iteration count
 * once it passes the warning level, warnings and errors.
 */
export class ChatRenderer {
  readonly c: Colors;
  readonly #o: ChatRendererOptions;
  readonly #spinner: Spinner;
  /** Text was written without its newline yet. */
  #midLine = false;
  /** Column of the cursor in streamed text (for word wrapping). */
  #column = 0;
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
  }

  /** Writes whole lines, ending any streamed text first. */
  line(text = ''): void {
    this.#spinner.stop();
    this.endLine();
    this.#o.write(`${text}\n`);
    this.#resumeSpinner();
  }

  /** The current session's redactor: events are redacted again once control characters are gone. */
  useRedactor(redactor: Redactor): void {
    this.#safe = terminalSafeEvents(redactor);
  }

  /** A labelled paragraph (`you ›`, `Iris ›`), word-wrapped like streamed replies; `text` is made terminal-safe. */
  say(label: string, plainLabelLength: number, text: string): void {
    this.#spinner.stop();
    this.endLine();
    this.#o.write(`${label} `);
    this.#column = plainLabelLength + 1;
    this.#writeWrapped(terminalSafe(text));
    this.endLine();
  }

  /** Ends a line of streamed text. */
  endLine(): void {
    if (this.#midLine) this.#o.write('\n');
    this.#midLine = false;
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

  /** `main argument` of a call for one line: a path relative to the project, a URL, a query... */
  mainArgument(args: unknown): string {
    if (typeof args === 'string') return oneLine(args, 50);
    if (typeof args !== 'object' || args === null) return '';
    const record = args as Record<string, unknown>;
    const key =
      MAIN_ARGS.find((k) => typeof record[k] === 'string') ??
      Object.keys(record).find((k) => typeof record[k] === 'string');
    if (!key) return '';
    let value = String(record[key]);
    const root = this.#o.projectRoot;
    if (root && path.isAbsolute(value) && value.startsWith(root + path.sep))
      value = path.relative(root, value);
    // Long paths: the last two parts say which file.
    if (value.length > 40 && /[\\/]/.test(value) && !/\s/.test(value)) {
      value = `…/${value.split(/[\\/]/).slice(-2).join('/')}`;
    }
    return oneLine(value, 50);
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
          this.#column = Array.from(this.#o.agentLabel).length + 3;
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
        if (!this.#o.terminal)
          this.#o.write(`${c.dim('…')} ${event.name} ${this.mainArgument(event.args)}\n`);
        this.#resumeSpinner();
        break;
      case 'tool_call_end': {
        const running = this.#running.get(event.toolCallId);
        this.#running.delete(event.toolCallId);
        const took = formatElapsed(running ? Date.now() - running.since : event.durationMs);
        const arg = this.mainArgument(event.args);
        const head = `${event.name}${arg ? ` ${arg}` : ''}`;
        const room = Math.max(20, (this.#o.columns?.() ?? 80) - Array.from(head).length - took.length - 8);
        if (event.error !== undefined) {
          this.line(`${c.red('✗')} ${head} ${c.dim(took)} ${c.red(oneLine(event.error, room))}`);
        } else if (event.result?.startsWith('The user declined')) {
          const reason = / Reason: (.*?) Do not retry/.exec(event.result)?.[1];
          this.line(
            `${c.yellow('⊘')} ${head} ${c.yellow(`declined${reason ? `: ${oneLine(reason, room)}` : ''}`)}`,
          );
        } else {
          this.line(
            `${c.green('✓')} ${head} ${c.dim(took)} ${c.dim('→')} ${oneLine(this.#relative(summarize(event.result)), room)}`,
          );
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
      case 'error':
        this.line(c.red(`error: ${event.message}`));
        break;
      case 'turn_end':
        this.#spinner.stop();
        // Calls cut off by an interrupt get no end event of their own.
        for (const { call, since } of this.#running.values()) {
          const arg = this.mainArgument(call.args);
          this.line(
            `${c.red('✗')} ${call.name}${arg ? ` ${arg}` : ''} ${c.dim(formatElapsed(Date.now() - since))} ${c.red('interrupted')}`,
          );
        }
        this.#running.clear();
        this.#thinkingSince = undefined;
        this.endLine();
        break;
      default:
        break;
    }
  }

  /** Paths under the project shown relative to it. */
  #relative(text: string): string {
    const root = this.#o.projectRoot;
    return root ? text.split(root + path.sep).join('') : text;
  }

  /** Streams text, breaking lines between words at the terminal width (only in a terminal). */
  #writeWrapped(delta: string): void {
    if (!this.#o.terminal) {
      this.#o.write(delta);
      this.#midLine = !delta.endsWith('\n');
      return;
    }
    const width = (this.#o.columns?.() ?? 80) - 1;
    for (const part of delta.split(/(\s)/)) {
      if (part === '') continue;
      const length = Array.from(part).length;
      if (part === '\n' || (part === ' ' && this.#column + 1 > width)) {
        this.#o.write('\n');
        this.#column = 0;
        continue;
      }
      if (part !== ' ' && this.#column > 0 && this.#column + length > width) {
        this.#o.write('\n');
        this.#column = 0;
      }
      this.#o.write(part);
      this.#column += length;
    }
    this.#midLine = this.#column > 0;
  }

  #resumeSpinner(): void {
    const label = this.#spinnerLabel();
    if (label) this.#spinner.start(() => this.#fit(this.#spinnerLabel() ?? ''));
  }

  #spinnerLabel(): string | undefined {
    const { c } = this;
    const hint = c.dim('  (Ctrl+C to stop)');
    if (this.#running.size > 0) {
      const [first, ...more] = [...this.#running.values()];
      const arg = this.mainArgument(first!.call.args);
      const extra = more.length > 0 ? c.dim(` +${more.length} more`) : '';
      return `${c.cyan(first!.call.name)}${arg ? ` ${arg}` : ''}${extra} ${c.dim(formatElapsed(Date.now() - first!.since))}${hint}`;
    }
    if (this.#thinkingSince !== undefined) {
      return `${this.#o.agentLabel} is thinking ${c.dim(formatElapsed(Date.now() - this.#thinkingSince))}${hint}`;
    }
    return undefined;
  }

  /** Cuts the spinner line to the terminal width (a wrapped line cannot be erased with `\r`). */
  #fit(text: string): string {
    const width = (this.#o.columns?.() ?? 80) - 3;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are measured out.
    const visible = text.replace(/\x1b\[[0-9;]*m/g, '');
    if (visible.length <= width) return text;
    return `${Array.from(visible)
      .slice(0, width - 1)
      .join('')}…`;
  }
}

/** A tool result for one line: the fields that say most (a saved path, a loaded workflow), else the text. */
function summarize(result: string | undefined): string {
  if (!result) return '(no output)';
  const field = (name: string) => new RegExp(`"${name}":\\s*"([^"]*)"`).exec(result)?.[1];
  const bytes = /"bytes":\s*(\d+)/.exec(result)?.[1];
  const workflow = field('workflow_name');
  if (workflow) return `loaded workflow ${workflow}`;
  const saved = field('path');
  if (saved && /"success":\s*true/.test(result)) return `saved ${saved}${bytes ? ` (${bytes} bytes)` : ''}`;
  if (saved && bytes) return `read ${saved} (${bytes} bytes)`;
  return result;
}
