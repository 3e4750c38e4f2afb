import pc from 'picocolors';
import type { Redactor } from '../events/redact.js';
import type { AgentEvent } from '../machines/emitted-events.js';
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

/**
 * Prints agent events as they happen: streamed text inline, one line per state change, tool call,
 * approval, warning and turn end. Colours follow picocolors (off for NO_COLOR and non-TTY output).
 * What the model and tools wrote is printed without control sequences (`terminalSafeEvents`), and
 * redacted once more with `redactor` when given.
 */
export function createEventPrinter(
  out: PrintTarget,
  options: { states?: boolean; redactor?: Redactor } = {},
): (event: AgentEvent) => void {
  const safe = terminalSafeEvents(options.redactor);
  const print = createPrinter(out, options);
  return (event) => {
    for (const clean of safe(event)) print(clean);
  };
}

function createPrinter(out: PrintTarget, options: { states?: boolean }) {
  let midLine = false;
  const line = (text: string) => {
    if (midLine) out.write('\n');
    midLine = false;
    out.write(`${text}\n`);
  };
  return (event: AgentEvent): void => {
    switch (event.type) {
      case 'state_change':
        if (options.states !== false) line(pc.dim(`· ${event.previous ?? '∅'} → ${event.state}`));
        break;
      case 'iteration':
        line(pc.dim(`· model call ${event.iteration}/${event.maxIterations}`));
        break;
      case 'content_chunk':
        out.write(event.delta);
        midLine = !event.delta.endsWith('\n');
        break;
      case 'retry': {
        const what = event.status === undefined ? event.kind : `${event.kind} ${event.status}`;
        line(
          pc.yellow(
            `↻ model call failed (${what}); attempt ${event.attempt + 1} of ${event.maxAttempts} in ${event.delayMs} ms`,
          ),
        );
        break;
      }
      case 'stream_reset':
        line(pc.yellow(`↺ stream discarded (${event.reason}, attempt ${event.attempt})`));
        break;
      case 'tool_call_start':
        line(pc.cyan(`▶ ${event.name} ${oneLine(event.args)}`));
        break;
      case 'tool_call_end': {
        const took = `${event.durationMs.toFixed(1)} ms`;
        if (event.error !== undefined) line(pc.red(`✗ ${event.name} (${took}): ${oneLine(event.error)}`));
        else line(pc.green(`✓ ${event.name} (${took}): ${oneLine(event.result)}`));
        break;
      }
      case 'approval_requested':
        for (const call of event.pending)
          line(pc.magenta(`? approval needed: ${call.name} ${oneLine(call.args)}`));
        break;
      case 'approval_resolved':
        line(pc.magenta(`${event.approved ? '✓ approved' : '✗ declined'} ${event.toolCallId}`));
        break;
      case 'limit_warning':
        line(pc.yellow(`! ${event.message}`));
        break;
      case 'context_pruned':
        line(
          pc.yellow(`! context pruned: ${event.prunedMessages} tool results, ${event.removedTokens} tokens`),
        );
        break;
      case 'usage':
        line(pc.dim(`· tokens: ${event.usage.promptTokens} in, ${event.usage.completionTokens} out`));
        break;
      case 'error':
        line(pc.red(`error: ${event.message}`));
        break;
      case 'turn_end':
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
