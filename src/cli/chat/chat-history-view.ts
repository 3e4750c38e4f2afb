import type { Agent } from '../../agent/agent.js';
import type { Redactor } from '../../events/redact.js';
import type { Message } from '../../llm/message.js';
import type { SessionRecord } from '../../session/session-store.js';
import type { ChatPersona } from '../cli-agent.js';
import { ellipsize } from '../terminal/terminal-layout.js';
import { terminalSafe, terminalSafeValue } from '../terminal/terminal-safe.js';
import type { ChatRenderer } from './chat-renderer.js';

/**
 * Prints one message of the conversation under its speaker; with `withTools`, its tool calls and
 * results too. The message is redacted with `redactor` and printed without control sequences.
 */
export function printChatMessage(
  r: ChatRenderer,
  bundle: ChatPersona,
  message: Message,
  redactor: Redactor,
  withTools = false,
): void {
  const { c } = r;
  const m = terminalSafeValue(redactor.redactValue(message));
  const label = `${bundle.icon ? `${bundle.icon} ` : ''}${bundle.name}`;
  if (m.role === 'user') r.say(c.bold(c.green('you ›')), messageText(m));
  else if (m.role === 'assistant') {
    if (messageText(m)) r.say(c.bold(c.cyan(`${label} ›`)), messageText(m));
    if (withTools) {
      for (const call of m.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        let args: unknown = call.function.arguments;
        try {
          args = JSON.parse(call.function.arguments);
        } catch {
          // shown as sent
        }
        const name = terminalSafe(call.function.name);
        r.line(c.dim(`  ↳ ${name} ${r.mainArgument(args, r.width - 5 - name.length)}`));
      }
    }
  } else if (m.role === 'tool' && withTools) {
    r.line(c.dim(`    → ${ellipsize(messageText(m), Math.min(100, r.width - 6))}`));
  }
}

/** What a resumed session looks like: what was recovered, and the last exchange. */
export function showResumeSummary(
  r: ChatRenderer,
  agent: Agent,
  bundle: ChatPersona,
  record: SessionRecord,
): void {
  const { c } = r;
  const report = agent.restoreReport;
  if (report && report.state !== report.savedState) {
    r.line(
      c.yellow(
        `! The last session stopped in the middle of a turn (saved ${report.savedState}); ` +
          `recovered ${report.replayedMessages} message(s) from the transcript.`,
      ),
    );
  }
  for (const call of report?.calls ?? []) {
    const what = {
      recorded: 'finished before the stop: its recorded result is used, it is not run again',
      interrupted: 'was cut off with no recorded result: the agent is told, it is not run again',
      'not-run': 'never started: the agent is told',
      rerun: 'runs when the batch goes on',
    }[call.outcome];
    r.line(c.yellow(`  ${terminalSafe(call.name)} ${what}`));
  }
  const recent = agent.messages.filter(
    (m) => m.role === 'user' || (m.role === 'assistant' && messageText(m)),
  );
  if (recent.length > 0) {
    const title = record.title ? ellipsize(terminalSafe(agent.redactor.redact(record.title)), 40) : '';
    r.line(c.dim(`… ${title ? `"${title}", ` : ''}last messages:`));
    for (const m of recent.slice(-2)) printChatMessage(r, bundle, m, agent.redactor);
  }
  if (agent.state === 'Interrupted') {
    r.line(c.dim('The last turn was stopped. /continue lets the agent go on; or just type.'));
  }
}

/** The text of a message: its string content, or its text parts joined. */
function messageText(m: Message): string {
  const content = (m as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').join('');
  return '';
}
