import type { Agent } from '../../agent/agent.js';
import type { ToolCallInfo } from '../../machines/emitted-events.js';
import { displayWidth, preview } from '../terminal/terminal-layout.js';
import { terminalSafeValue } from '../terminal/terminal-safe.js';
import type { ChatRenderer } from './chat-renderer.js';
import { type PathView, shownPath } from './chat-tool-lines.js';

/** What the approval prompt uses of the chat it runs in. */
export interface ApprovalPromptHost {
  agent: Agent;
  renderer: ChatRenderer;
  /** Asks for a line as an approval answer; null when the question was cancelled or the input ended. */
  ask(prompt: string): Promise<string | null>;
}

/**
 * Shows a tool call waiting for approval and asks until the answer is y, a (always for this tool),
 * or n with an optional reason, then tells the agent. Returns early when the call stops waiting
 * (answered elsewhere, e.g. in the inspector); the end of input rejects it.
 */
export async function askApproval(waiting: ToolCallInfo, host: ApprovalPromptHost): Promise<void> {
  const { agent, renderer: r } = host;
  const { c } = r;
  // A restored session's calls come from the agent's context: redact them, and print the model's
  // name and arguments without control sequences (keys too: `{ "path": .., "path\x07": .. }` shows both).
  const call = terminalSafeValue(agent.redactor.redactValue(waiting));
  r.pause();
  r.line(`${c.magenta('?')} ${c.bold(call.name)} wants to run:`);
  // Paths as the tool will use them (`{output_folder}/x.md` -> `docs/requirements/x.md`): what is approved is the real target.
  for (const { key, text } of describeArgs(
    shownPaths(call.args, (value) => r.shownPath(value)),
    r.width - 4,
  )) {
    if (key === undefined) r.hangingLine(`    ${text}`, 4);
    else r.hangingLine(`    ${key}: ${text}`, Math.min(4 + displayWidth(key) + 2, 24));
  }
  for (;;) {
    const answer = await host.ask(
      `  ${c.magenta(`Allow? [y]es / [n]o (reason) / [a]lways for ${call.name} ›`)} `,
    );
    if (!agent.pendingApprovals.some((p) => p.toolCallId === call.toolCallId)) return;
    if (answer === null) {
      agent.reject(call.toolCallId, 'no answer: the input ended');
      return;
    }
    const text = answer.trim();
    if (/^(y|yes)$/i.test(text)) {
      agent.approve(call.toolCallId);
      return;
    }
    if (/^(a|always)$/i.test(text)) {
      agent.approve(call.toolCallId, { always: true });
      r.line(c.dim(`  ${call.name} is allowed for the rest of this session.`));
      return;
    }
    const no = /^(n|no)\b[\s:,-]*(.*)$/i.exec(text);
    if (no) {
      const reason = no[2]!.trim();
      if (reason) agent.reject(call.toolCallId, reason);
      else agent.reject(call.toolCallId);
      return;
    }
    r.line(c.dim('  Answer y, n (optionally with a reason, e.g. "n wrong folder") or a.'));
  }
}

/** The arguments with each string value that is a path shown as a user reads it (variables filled, relative to the project). */
export function shownPaths(args: unknown, view: PathView | ((value: string) => string)): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const show = typeof view === 'function' ? view : (value: string) => shownPath(value, view);
  return Object.fromEntries(
    Object.entries(args as Record<string, unknown>).map(([key, value]) => [
      key,
      typeof value === 'string' ? show(value) : value,
    ]),
  );
}

/** Rows a value may take before it is shown as a preview. */
const WHOLE_ROWS = 3;

/**
 * The arguments of a call, one entry per field: a one-line value that fits in a few rows is shown
 * whole (a path must be read whole to be approved); longer or multi-line values as a preview of
 * their first line, ending in one `…`, with their length.
 */
export function describeArgs(args: unknown, width: number): { key?: string; text: string }[] {
  if (typeof args !== 'object' || args === null) {
    const shown = typeof args === 'string' ? args : JSON.stringify(args);
    return [{ text: describeValue(shown ?? '', width) }];
  }
  return Object.entries(args as Record<string, unknown>).map(([key, value]) => {
    const shown = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
    return { key, text: describeValue(shown, width - displayWidth(key) - 2) };
  });
}

function describeValue(shown: string, room: number): string {
  const lines = shown.split('\n');
  if (lines.length === 1 && displayWidth(shown) <= Math.max(room, 20) * WHOLE_ROWS) return shown;
  const size =
    lines.length > 1 ? ` (${shown.length} chars, ${lines.length} lines)` : ` (${shown.length} chars)`;
  const first = lines.find((l) => l.trim() !== '') ?? '';
  // A narrow terminal gives the preview a second row rather than a few characters.
  return `${preview(first, Math.max(room - size.length, Math.min(room, 48)), true)}${size}`;
}
