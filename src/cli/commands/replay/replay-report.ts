import { shownValue } from '../../../evals/recorded-request.js';
import type { ReplayDivergence, ReplayedTurn } from '../../../evals/replay-options.js';
import { trajectoryOf } from '../../../evals/trajectory.js';
import { terminalSafe } from '../../terminal/terminal-safe.js';

/**
 * A replayed turn as `agentloop replay` prints it: the user message, the tool calls the turn made
 * (those past the `before` calls of earlier turns), and the answer or the error. Terminal-safe.
 */
export function turnText(turn: ReplayedTurn, before: number): { lines: string; calls: number } {
  const calls = trajectoryOf(turn.result.messages);
  const lines = [`turn ${turn.turn} > ${oneLine(turn.input)}`];
  for (const call of calls.slice(before))
    lines.push(`  tool ${call.name} ${oneLine(shownValue(call.args, 120))}`);
  if (turn.result.error) lines.push(`  error: ${oneLine(turn.result.error)}`);
  else lines.push(`  < ${oneLine(turn.result.response)}`);
  return { lines: `${lines.join('\n')}\n`, calls: calls.length };
}

/** A divergence as a readable diff: where, then the recorded (-) and the replayed (+) value. */
export function divergenceText(divergence: ReplayDivergence): string {
  const lines: string[] = [];
  if (divergence.kind === 'request') {
    const where =
      divergence.turn !== undefined ? ` (turn ${divergence.turn}, iteration ${divergence.iteration})` : '';
    lines.push(`diverged at model call ${divergence.step}${where}: the request is not the recorded one`);
    if (divergence.path !== undefined) {
      lines.push(`  at ${divergence.path || '(the whole request)'}`);
      lines.push(`  - recorded: ${shownValue(divergence.recorded, 400)}`);
      lines.push(`  + replay:   ${shownValue(divergence.actual, 400)}`);
      if (divergence.approximate) lines.push('  (the recorded request was rebuilt from the transcript)');
    } else {
      lines.push(`  ${divergence.message}`);
    }
  } else if (divergence.kind === 'tool_result') {
    lines.push(
      `diverged after model call ${divergence.step}: tool call ${divergence.toolCallId} (${divergence.name}) returned another result`,
    );
    lines.push(`  - recorded: ${shownValue(divergence.recorded, 400)}`);
    lines.push(`  + replay:   ${shownValue(divergence.actual, 400)}`);
  } else if (divergence.kind === 'error') {
    lines.push(`diverged at model call ${divergence.step}: turn ${divergence.turn} ended in an error`);
    lines.push(`  ${oneLine(divergence.error)}`);
  } else {
    lines.push(`diverged: ${divergence.message}`);
  }
  return `${lines.map(terminalSafe).join('\n')}\n`;
}

function oneLine(text: string): string {
  const flat = terminalSafe(text).replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}
