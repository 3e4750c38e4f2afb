import pc from 'picocolors';
import { progressText } from '../../events/progress-text.js';
import type { Redactor } from '../../events/redact.js';
import type { AgentEvent } from '../../machines/emitted-events.js';
import { planChecklist } from './plan-checklist.js';
import { terminalSafe, terminalSafeEvents } from './terminal-safe.js';

/** Where printed lines go. */
export interface PrintTarget {
  write(text: string): void;
}

/** Shortens a value for one terminal line (terminal-safe: no control sequences). */
export function oneLine(value: unknown, max = 80): string {
  const text = terminalSafe(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** How a printer shows the model's text. */
export type PrintedText =
  /** Streamed inline as it arrives (the demo). */
  | 'stream'
  /**
   * Progress only (`run`, whose answer goes to stdout on its own): text the model wrote before tool
   * calls is printed as one line when the calls start; the final answer is left out.
   */
  | 'progress';

/** One line for a `retry` event: what happened, then when the next attempt comes. */
export function retryNote(event: AgentEvent<'retry'>): string {
  const next = `retrying in ${(event.delayMs / 1000).toFixed(1)} s (attempt ${event.attempt + 1} of ${event.maxAttempts})`;
  switch (event.kind) {
    case 'connection':
    case 'timeout':
      return `${event.message}; ${next}`;
    case 'stream_cut':
      return `the reply broke off (${event.message}); ${next}`;
    default: {
      const what = event.status === undefined ? event.kind : `${event.kind} ${event.status}`;
      return `model call failed (${what}): ${event.message}; ${next}`;
    }
  }
}

/** What a printer says on `stream_reset` when part of a reply was shown (nothing otherwise). */
export const RESET_NOTE = '↺ the reply above broke off: it is discarded and the model asked again';

/**
 * Prints agent events as they happen: streamed text inline (or, with `text: 'progress'`, only the text
 * before tool calls), one line per state change, tool call, tool progress report, approval, retry,
 * warning and turn end.
 * Colours follow picocolors (off for NO_COLOR and non-TTY output). What the model and tools wrote is
 * printed without control sequences (`terminalSafeEvents`), and redacted once more with `redactor`.
 */
export function createEventPrinter(
  out: PrintTarget,
  options: { states?: boolean; redactor?: Redactor; text?: PrintedText } = {},
): (event: AgentEvent) => void {
  const safe = terminalSafeEvents(options.redactor);
  const print = createPrinter(out, options);
  return (event) => {
    for (const clean of safe(event)) print(clean);
  };
}

function createPrinter(out: PrintTarget, options: { states?: boolean; text?: PrintedText }) {
  let midLine = false;
  // The model's text of the current call: shown (streamed) or held (progress mode).
  let replyShown = false;
  let held = '';
  const line = (text: string) => {
    if (midLine) out.write('\n');
    midLine = false;
    out.write(`${text}\n`);
  };
  const flushHeld = () => {
    const text = held.trim();
    held = '';
    if (text) line(pc.dim(text));
  };
  return (event: AgentEvent): void => {
    switch (event.type) {
      case 'state_change':
        if (options.states !== false) line(pc.dim(`· ${event.previous ?? '∅'} → ${event.state}`));
        break;
      case 'iteration':
        replyShown = false;
        held = '';
        line(pc.dim(`· model call ${event.iteration}/${event.maxIterations}`));
        break;
      case 'content_chunk':
        if (options.text === 'progress') {
          held += event.delta;
          break;
        }
        out.write(event.delta);
        replyShown = true;
        midLine = !event.delta.endsWith('\n');
        break;
      case 'retry':
        line(pc.yellow(`↻ ${retryNote(event)}`));
        break;
      case 'stream_reset':
        held = '';
        if (replyShown) line(pc.yellow(RESET_NOTE));
        replyShown = false;
        break;
      case 'tool_call_start':
        flushHeld();
        line(pc.cyan(`▶ ${event.name} ${oneLine(event.args)}`));
        break;
      case 'tool_call_end': {
        const took = `${event.durationMs.toFixed(1)} ms`;
        if (event.error !== undefined) line(pc.red(`✗ ${event.name} (${took}): ${oneLine(event.error)}`));
        else line(pc.green(`✓ ${event.name} (${took}): ${oneLine(event.result)}`));
        break;
      }
      case 'tool_progress': {
        const text = progressText(event);
        if (text) line(pc.dim(`  ↳ ${event.name}: ${oneLine(text)}`));
        break;
      }
      case 'approval_requested':
        flushHeld();
        for (const call of event.pending)
          line(pc.magenta(`? approval needed: ${call.name} ${oneLine(call.args)}`));
        break;
      case 'approval_resolved':
        line(pc.magenta(`${event.approved ? '✓ approved' : '✗ declined'} ${event.toolCallId}`));
        break;
      case 'plan_updated':
        flushHeld();
        for (const text of planChecklist(event.plan, pc)) line(text);
        break;
      case 'limit_warning':
        line(pc.yellow(`! ${event.message}`));
        break;
      case 'context_pruned':
        line(
          pc.yellow(`! context pruned: ${event.prunedMessages} tool results, ${event.removedTokens} tokens`),
        );
        break;
      case 'context_compacted':
        line(
          pc.yellow(
            `! context compacted: ${event.entriesCovered} messages summarized, ${event.tokensBefore} -> ${event.tokensAfter} tokens`,
          ),
        );
        break;
      case 'usage':
        line(pc.dim(`· tokens: ${event.usage.promptTokens} in, ${event.usage.completionTokens} out`));
        break;
      case 'error':
        line(pc.red(`error: ${event.message}`));
        break;
      case 'turn_end':
        held = '';
        line(
          pc.bold(
            `■ turn ${event.turn} ended: ${event.terminateReason} after ${event.iterations} model calls`,
          ),
        );
        break;
      default:
        break;
    }
  };
}
