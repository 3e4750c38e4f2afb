import type { Agent } from '../../agent/agent.js';
import type { FileSessionStore } from '../../session/file-store/file-session-store.js';
import type { ApprovalPolicy } from '../../tools/tool-call.js';
import type { ChatPersona } from '../cli-agent.js';
import { formatSessionList } from '../commands/sessions/sessions-command.js';
import { formatCostUsd } from '../terminal/cost-text.js';
import { planChecklist } from '../terminal/plan-checklist.js';
import { terminalSafe, terminalSafeValue } from '../terminal/terminal-safe.js';
import { printChatMessage } from './chat-history-view.js';
import type { ChatRenderer } from './chat-renderer.js';
import { toolList } from './tool-list.js';

/** What `/help` prints. */
export const CHAT_HELP = `Commands:
  /help            this list
  /stop            stop the running turn (type it while the agent works, or press Ctrl+C)
  /continue        let the agent go on with a stopped or failed turn
  /history         the conversation so far
  /tools           the agent's tools (MCP servers' too) and which ones ask first
  /plan            the agent's plan
  /usage           tokens and model calls
  /compact [focus] summarize the older conversation now (e.g. /compact keep the API decisions)
  /save            save the session now (it is saved at every rest point anyway)
  /sessions        saved sessions
  /resume <id>     switch to a saved session
  /exit            leave (Ctrl+C on an empty line, or Ctrl+D, too)
Approvals: y = yes, n = no (add a reason: "n not that file"), a = always for this tool in this session.`;

/** What a slash command asks of the chat: `'exit'` to leave it, undefined to prompt again. */
export type SlashCommandOutcome = 'exit' | undefined;

/** What the slash commands use of the chat they run in (its current session). */
export interface SlashCommandHost {
  agent: Agent;
  bundle: ChatPersona;
  renderer: ChatRenderer;
  store: FileSessionStore;
  /** Runs one turn that `start` begins, asking approvals as they come; resolves when the agent rests. */
  turn(start: () => unknown): Promise<void>;
  /** Opens saved session `id` and makes it current; throws when it cannot be opened. */
  switchTo(id: string): Promise<void>;
  /** Asks the approvals the current session was waiting for when it was saved, and finishes that turn. */
  continuePending(): Promise<void>;
  /** The approval policy the agent was made with, for `/tools`. */
  approval?: ApprovalPolicy;
}

/** Runs one slash command line (`/name args`) typed at the chat prompt. */
export async function runSlashCommand(line: string, host: SlashCommandHost): Promise<SlashCommandOutcome> {
  const { agent, renderer: r, store } = host;
  const { c } = r;
  const [name, ...rest] = line.slice(1).split(/\s+/);
  const arg = rest.join(' ').trim();
  switch (name) {
    case 'help':
      r.line(CHAT_HELP);
      return;
    case 'exit':
    case 'quit':
      return 'exit';
    case 'stop':
      r.line(c.dim('Nothing is running. (/exit leaves; the session is saved either way.)'));
      return;
    case 'continue':
      if (
        agent.state === 'Interrupted' ||
        (agent.state === 'Error' && agent.context.initialized && agent.context.turn > 0)
      ) {
        await host.turn(() => agent.resume());
      } else {
        r.line(c.dim('Nothing to continue: the last turn ended normally.'));
      }
      return;
    case 'history':
      for (const m of agent.messages) printChatMessage(r, host.bundle, m, agent.redactor, true);
      return;
    case 'tools':
      for (const text of toolList(agent, c, host.approval)) r.line(text);
      return;
    case 'plan':
      if (agent.plan) for (const text of planChecklist(terminalSafeValue(agent.plan), c)) r.line(text);
      else r.line(c.dim('No plan yet: the agent makes one with update_plan for tasks of several steps.'));
      return;
    case 'usage': {
      const ctx = agent.context;
      const t = ctx.turnUsage;
      const all = ctx.totalUsage;
      r.line(
        `Last turn: ${t.promptTokens} tokens in, ${t.completionTokens} out, ${ctx.iteration} of ${ctx.maxIterations} model calls.`,
      );
      r.line(
        `Session: ${all.promptTokens} in, ${all.completionTokens} out, ${all.totalTokens} in all, ${ctx.turn} turns.`,
      );
      r.line(
        all.costUsd === undefined
          ? 'Cost: unknown (no price for the model, see the `pricing` option; or a reply without usage).'
          : `Cost: last turn ${formatCostUsd(t.costUsd)}, session ${formatCostUsd(all.costUsd)}.`,
      );
      return;
    }
    case 'compact': {
      if (agent.state !== 'Completed' && agent.state !== 'Interrupted' && agent.state !== 'Error') {
        r.line(c.dim('Nothing to compact yet: compact after a turn.'));
        return;
      }
      // The renderer prints the outcome: the context_compacted line, or the limit_warning saying why not.
      r.line(c.dim('Compacting...'));
      await agent
        .compact(arg || undefined)
        .catch((error: Error) => r.line(c.red(terminalSafe(error.message))));
      return;
    }
    case 'save': {
      const record = await agent.save();
      r.line(
        record
          ? `Saved session ${record.id} (${record.state}) in ${store.sessionDir(record.id)}`
          : c.yellow('Nothing saved yet.'),
      );
      return;
    }
    case 'sessions': {
      const rows = agent.redactor.redactValue(await store.list());
      r.line(formatSessionList(rows, c, agent.sessionId) || c.dim(`No sessions in ${store.dir}.`));
      return;
    }
    case 'resume': {
      if (!arg) {
        r.line(c.dim('Usage: /resume <id> (/sessions lists them)'));
        return;
      }
      if (arg === agent.sessionId) {
        r.line(c.dim('That is the current session.'));
        return;
      }
      if (!(await store.load(arg).catch(() => undefined))) {
        r.line(c.red(`No readable session "${arg}" (/sessions lists them).`));
        return;
      }
      try {
        await host.switchTo(arg);
      } catch (error) {
        r.line(c.red(`Cannot open session "${arg}": ${terminalSafe((error as Error).message)}`));
        return;
      }
      await host.continuePending();
      return;
    }
    default:
      r.line(c.dim(`Unknown command /${name}. /help lists them.`));
      return;
  }
}
