import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Agent } from '../agent/agent.js';
import type { ToolCallInfo } from '../machines/emitted-events.js';
import type { ApprovalPolicy } from '../tools/tool-call.js';
import { describeArgs, shownPaths } from './chat/chat-approval-prompt.js';
import type { PathView } from './chat/chat-tool-lines.js';
import { terminalSafe, terminalSafeValue } from './terminal/terminal-safe.js';

/**
 * The one approval rule of `run` and `chat`: `save_output` (the bundle tool that writes files) asks,
 * other tools decide themselves (`needsApproval`); `--yes` approves every call. Calls that ask are
 * asked on the terminal (chat's prompt; run's on stderr), or answered in the inspector page; `run`
 * with neither declines them, saying so.
 */
export function cliApprovalPolicy(yes: boolean): ApprovalPolicy {
  return yes ? 'never' : (call) => (call.name === 'save_output' ? true : undefined);
}

/** What the reason a declined call reaches the model with, when `run` had nobody to ask. */
export const NO_TERMINAL_REASON =
  'agentloop run had no terminal to ask for approval on (it runs with --yes to approve every call)';

/** Where `run` answers approval requests. */
export interface RunApprovalOptions {
  /** Writes a progress line (stderr). */
  note: (text: string) => void;
  /** The terminal to ask on (stdin and stderr both a TTY), if there is one. */
  terminal?: { input: Readable; output: Writable } | undefined;
  /** The inspector page's address, when it answers approvals. */
  pageUrl?: string | undefined;
  /** How paths are shown (a bundle agent's variables filled): what is approved is the real target. */
  paths?: PathView;
}

/**
 * Answers `run`'s approval requests: asked one at a time on the terminal, else left to the inspector
 * page, else declined with a note saying how to approve. Returns a function that stops listening
 * (and closes the terminal prompt, if one is open).
 */
export function answerRunApprovals(agent: Agent, options: RunApprovalOptions): () => void {
  const queue: ToolCallInfo[] = [];
  let asking = false;
  let closePrompt: (() => void) | undefined;
  const next = async () => {
    if (asking) return;
    asking = true;
    try {
      for (let call = queue.shift(); call; call = queue.shift()) {
        if (!agent.pendingApprovals.some((p) => p.toolCallId === call?.toolCallId)) continue;
        await askOnTerminal(agent, call, options, (close) => {
          closePrompt = close;
        });
      }
    } finally {
      asking = false;
    }
  };
  const off = agent.on('approval_requested', (event) => {
    for (const call of event.pending) {
      const name = terminalSafe(call.name);
      if (options.terminal) queue.push(call);
      else if (options.pageUrl) options.note(`  (approve or reject ${name} in ${options.pageUrl})\n`);
      else {
        options.note(
          `✗ ${name} not run: it needs approval and there is no terminal to ask on; run with --yes to approve every call\n`,
        );
        agent.reject(call.toolCallId, NO_TERMINAL_REASON);
      }
    }
    // After the event's other listeners: the progress printer's "? approval needed" line comes first.
    if (queue.length > 0) setImmediate(() => void next());
  });
  return () => {
    off();
    closePrompt?.();
  };
}

/** Shows one call's arguments and asks y / n (reason) on the terminal until answered. */
async function askOnTerminal(
  agent: Agent,
  waiting: ToolCallInfo,
  options: RunApprovalOptions,
  onOpen: (close: () => void) => void,
): Promise<void> {
  const terminal = options.terminal;
  if (!terminal) return;
  // Under the printer's `? approval needed: <name> <args>` line: the arguments one per line, in full.
  const call = terminalSafeValue(agent.redactor.redactValue(waiting));
  const columns = (terminal.output as { columns?: number }).columns ?? 100;
  const args = options.paths ? shownPaths(call.args, options.paths) : call.args;
  for (const { key, text } of describeArgs(args, columns - 4)) {
    options.note(`    ${key === undefined ? text : `${key}: ${text}`}\n`);
  }
  const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: true });
  let answered = false;
  const close = () => rl.close();
  onOpen(close);
  // Ctrl+C at the prompt stops the turn, as it would anywhere else.
  rl.on('SIGINT', () => {
    rl.close();
    agent.interrupt('the user pressed Ctrl+C');
  });
  try {
    for (;;) {
      const answer = await new Promise<string | null>((resolve) => {
        rl.once('close', () => resolve(null));
        rl.question(`  Allow? [y]es / [n]o (reason) › `, resolve);
      });
      if (!agent.pendingApprovals.some((p) => p.toolCallId === call.toolCallId)) return;
      if (answer === null) {
        if (!answered) agent.reject(call.toolCallId, 'no answer: the input ended');
        return;
      }
      const text = answer.trim();
      if (/^(y|yes)$/i.test(text)) {
        answered = true;
        agent.approve(call.toolCallId);
        return;
      }
      const no = /^(n|no)\b[\s:,-]*(.*)$/i.exec(text);
      if (no) {
        answered = true;
        const reason = no[2]!.trim();
        if (reason) agent.reject(call.toolCallId, reason);
        else agent.reject(call.toolCallId);
        return;
      }
      options.note('  Answer y, or n (optionally with a reason, e.g. "n wrong folder").\n');
    }
  } finally {
    rl.close();
  }
}
