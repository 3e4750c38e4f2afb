import type { Agent } from '../agent/agent.js';
import type { BundleAgent } from '../bundle/bundle-agent.js';
import { DEFAULTS } from '../defaults.js';
import type { Message } from '../llm/message.js';
import type { AgentEvent, ToolCallInfo } from '../machines/emitted-events.js';
import type { FileSessionStore } from '../session/file-session-store.js';
import type { SessionRecord } from '../session/session-store.js';
import type { ChatInput } from './chat-input.js';
import type { ChatRenderer } from './chat-renderer.js';
import { oneLine } from './event-printer.js';
import { formatSessionList } from './sessions-command.js';

export interface ChatSessionOptions {
  input: ChatInput;
  renderer: ChatRenderer;
  store: FileSessionStore;
  /** One line saying which model answers. */
  connection: string;
  /** Opens (restores or creates) a session's agent. */
  open(id: string): Promise<{ agent: Agent; bundleAgent: BundleAgent; record: SessionRecord | undefined }>;
  /** The command that continues a session, for the goodbye line. */
  resumeCommand?: (id: string) => string;
}

export const CHAT_HELP = `Commands:
  /help            this list
  /stop            stop the running turn (type it while the agent works, or press Ctrl+C)
  /continue        let the agent go on with a stopped or failed turn
  /history         the conversation so far
  /usage           tokens and model calls
  /save            save the session now (it is saved at every rest point anyway)
  /sessions        saved sessions
  /resume <id>     switch to a saved session
  /exit            leave (Ctrl+C on an empty line, or Ctrl+D, too)
Approvals: y = yes, n = no (add a reason: "n not that file"), a = always for this tool in this session.`;

type Outcome = 'exit' | undefined;

/** One chat: the prompt loop over a session's agent, with approvals, interrupts and slash commands. */
export class ChatSession {
  readonly #o: ChatSessionOptions;
  #agent!: Agent;
  #bundle!: BundleAgent;
  #offs: (() => void)[] = [];
  #busy = false;
  #asking = false;
  #stopping = false;
  #leaving = false;
  #pendingQuestion: ((value: null) => void) | undefined;

  constructor(options: ChatSessionOptions) {
    this.#o = options;
    options.input.onInterrupt = () => this.#interrupt();
    options.input.onLineWhileBusy = () => {
      if (this.#busy && !this.#asking && options.input.peek()?.trim() === '/stop') {
        options.input.shift();
        this.#interrupt();
      }
    };
  }

  get #r(): ChatRenderer {
    return this.#o.renderer;
  }

  /** Runs the chat on session `id` (created when `isNew`); resolves with the exit code. */
  async run(id: string, isNew: boolean): Promise<number> {
    const { c } = this.#r;
    try {
      await this.#switchTo(id);
    } catch (error) {
      this.#r.line(c.red(`Cannot open session "${id}": ${(error as Error).message}`));
      return 1;
    }
    if (isNew) this.#r.line(`\n${this.#bundle.greeting}\n`);
    await this.#continuePending();
    while (!this.#leaving) {
      const line = await this.#ask(`${c.bold(c.green('you ›'))} `);
      if (line === null) break;
      const text = line.trim();
      if (!text) continue;
      if (text.startsWith('/')) {
        if ((await this.#command(text)) === 'exit') break;
        continue;
      }
      await this.#turn(() => this.#agent.send(text));
    }
    await this.#close();
    return 0;
  }

  /** Opens session `id` (restored or new) and makes it current. */
  async #switchTo(id: string): Promise<void> {
    const { c } = this.#r;
    const { agent, bundleAgent, record } = await this.#o.open(id);
    try {
      await agent.ready();
    } catch (error) {
      agent.stop();
      throw error;
    }
    if (this.#agent) await this.#detach();
    this.#agent = agent;
    this.#bundle = bundleAgent;
    this.#offs.push(agent.on('*', (event: AgentEvent) => this.#r.handle(event)));
    const title = `${bundleAgent.icon ? `${bundleAgent.icon} ` : ''}${bundleAgent.name}${bundleAgent.title ? `, ${bundleAgent.title}` : ''}`;
    this.#r.line(`${c.bold('agentloop chat')} · ${title}`);
    this.#r.line(c.dim(`model: ${this.#o.connection}`));
    this.#r.line(
      c.dim(
        `session ${agent.sessionId} (${record ? `resumed, ${record.turns ?? 0} turns, saved ${record.state}` : 'new'})`,
      ),
    );
    this.#r.line(c.dim('/help for commands · Ctrl+C stops a turn; on an empty line it leaves'));
    if (record) this.#showResume(record);
  }

  async #detach(): Promise<void> {
    for (const off of this.#offs.splice(0)) off();
    await this.#agent.flush();
    this.#agent.stop();
  }

  /** What a resumed session looks like: what was recovered, and the last exchange. */
  #showResume(record: SessionRecord): void {
    const { c } = this.#r;
    const report = this.#agent.restoreReport;
    if (report && report.state !== report.savedState) {
      this.#r.line(
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
      this.#r.line(c.yellow(`  ${call.name} ${what}`));
    }
    const recent = this.#agent.messages.filter(
      (m) => m.role === 'user' || (m.role === 'assistant' && text(m)),
    );
    if (recent.length > 0) {
      this.#r.line(c.dim(`… ${record.title ? `"${oneLine(record.title, 40)}", ` : ''}last messages:`));
      for (const m of recent.slice(-2)) this.#printMessage(m);
    }
    if (this.#agent.state === 'Interrupted') {
      this.#r.line(c.dim('The last turn was stopped. /continue lets the agent go on; or just type.'));
    }
  }

  /** After a restore in WaitingApproval the calls still wait for an answer: ask, then let the turn finish. */
  async #continuePending(): Promise<void> {
    if (this.#agent.state !== 'WaitingApproval') return;
    this.#r.line(this.#r.c.magenta('The agent was waiting for your approval when the session stopped.'));
    await this.#turn(() => {});
  }

  /** Runs one turn: `start` sends; approvals are asked as they come; resolves when the agent rests. */
  async #turn(start: () => unknown): Promise<void> {
    const agent = this.#agent;
    const { c } = this.#r;
    this.#busy = true;
    this.#stopping = false;
    this.#r.turnStarted();
    const ended = new Promise<AgentEvent<'turn_end'>>((resolve) => {
      const off = agent.on('turn_end', (event) => {
        off();
        resolve(event);
      });
    });
    const queue: ToolCallInfo[] = [...agent.pendingApprovals];
    let wake: (() => void) | undefined;
    const offApproval = agent.on('approval_requested', (event) => {
      queue.push(...event.pending);
      wake?.();
    });
    let over = false;
    const asker = (async () => {
      while (!over) {
        const call = queue.shift();
        if (!call) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        if (!agent.pendingApprovals.some((p) => p.toolCallId === call.toolCallId)) continue;
        await this.#askApproval(call);
      }
    })();
    try {
      const started = start();
      if (started instanceof Promise)
        started.catch((error: unknown) => this.#r.line(c.red(`error: ${(error as Error).message}`)));
      const end = await ended;
      over = true;
      wake?.();
      this.#pendingQuestion?.(null);
      await asker;
      await agent.flush();
      this.#afterTurn(end);
      if (end.terminateReason === 'max_iterations') await this.#offerExtension();
    } finally {
      offApproval();
      this.#busy = false;
    }
  }

  #afterTurn(end: AgentEvent<'turn_end'>): void {
    const { c } = this.#r;
    switch (end.terminateReason) {
      case 'completed':
      case 'question':
        break;
      case 'interrupted':
        this.#r.line(c.yellow('⏹ Stopped. The session is saved; type to go on, or /continue.'));
        break;
      case 'error':
        this.#r.line(c.red('The turn failed (see above). /continue tries again.'));
        break;
      case 'max_iterations':
        break;
      default:
        this.#r.line(c.yellow(`The turn ended early: ${end.terminateReason.replace(/_/g, ' ')}.`));
    }
  }

  async #offerExtension(): Promise<void> {
    const { c } = this.#r;
    const by = DEFAULTS.extendIterationsBy;
    const answer = await this.#ask(
      c.yellow(
        `The turn stopped at its limit of ${this.#agent.context.maxIterations} model calls. Allow ${by} more? [y/N] `,
      ),
    );
    if (answer && /^y(es)?$/i.test(answer.trim())) await this.#turn(() => this.#agent.extendLimit(by));
  }

  async #askApproval(call: ToolCallInfo): Promise<void> {
    const { c } = this.#r;
    this.#r.pause();
    this.#r.line(`${c.magenta('?')} ${c.bold(call.name)} wants to run:`);
    for (const line of describeArgs(call.args)) this.#r.line(`    ${line}`);
    for (;;) {
      const answer = await this.#ask(
        `  ${c.magenta(`Allow? [y]es / [n]o (reason) / [a]lways for ${call.name} ›`)} `,
        true,
      );
      if (!this.#agent.pendingApprovals.some((p) => p.toolCallId === call.toolCallId)) return;
      if (answer === null) {
        this.#agent.reject(call.toolCallId, 'no answer: the input ended');
        return;
      }
      const text = answer.trim();
      if (/^(y|yes)$/i.test(text)) {
        this.#agent.approve(call.toolCallId);
        return;
      }
      if (/^(a|always)$/i.test(text)) {
        this.#agent.approve(call.toolCallId, { always: true });
        this.#r.line(c.dim(`  ${call.name} is allowed for the rest of this session.`));
        return;
      }
      const no = /^(n|no)\b[\s:,-]*(.*)$/i.exec(text);
      if (no) {
        const reason = no[2]!.trim();
        if (reason) this.#agent.reject(call.toolCallId, reason);
        else this.#agent.reject(call.toolCallId);
        return;
      }
      this.#r.line(c.dim('  Answer y, n (optionally with a reason, e.g. "n wrong folder") or a.'));
    }
  }

  /** Asks for a line; Ctrl+C while asking resolves with null. */
  #ask(prompt: string, approval = false): Promise<string | null> {
    this.#r.pause();
    this.#asking = approval;
    return new Promise((resolve) => {
      this.#pendingQuestion = resolve;
      this.#o.input.question(prompt).then((line) => {
        if (this.#pendingQuestion === resolve) {
          this.#pendingQuestion = undefined;
          this.#asking = false;
          resolve(line);
        }
      });
    });
  }

  /** Ctrl+C or /stop: stop the running turn; at an empty prompt, leave. */
  #interrupt(): void {
    const { c } = this.#r;
    if (this.#busy) {
      if (this.#stopping) return;
      this.#stopping = true;
      this.#r.line(c.yellow('⏹ stopping…'));
      this.#agent.interrupt('the user pressed Ctrl+C');
      return;
    }
    this.#leaving = true;
    this.#o.input.cancel();
  }

  async #command(line: string): Promise<Outcome> {
    const { c } = this.#r;
    const [name, ...rest] = line.slice(1).split(/\s+/);
    const arg = rest.join(' ').trim();
    const agent = this.#agent;
    switch (name) {
      case 'help':
        this.#r.line(CHAT_HELP);
        return;
      case 'exit':
      case 'quit':
        return 'exit';
      case 'stop':
        this.#r.line(c.dim('Nothing is running. (/exit leaves; the session is saved either way.)'));
        return;
      case 'continue':
        if (
          agent.state === 'Interrupted' ||
          (agent.state === 'Error' && agent.context.initialized && agent.context.turn > 0)
        ) {
          await this.#turn(() => agent.resume());
        } else {
          this.#r.line(c.dim('Nothing to continue: the last turn ended normally.'));
        }
        return;
      case 'history':
        for (const m of agent.messages) this.#printMessage(m, true);
        return;
      case 'usage': {
        const ctx = agent.context;
        const t = ctx.turnUsage;
        const all = ctx.totalUsage;
        this.#r.line(
          `Last turn: ${t.promptTokens} tokens in, ${t.completionTokens} out, ${ctx.iteration} of ${ctx.maxIterations} model calls.`,
        );
        this.#r.line(
          `Session: ${all.promptTokens} in, ${all.completionTokens} out, ${all.totalTokens} in all, ${ctx.turn} turns.`,
        );
        return;
      }
      case 'save': {
        const record = await agent.save();
        this.#r.line(
          record
            ? `Saved session ${record.id} (${record.state}) in ${this.#o.store.sessionDir(record.id)}`
            : c.yellow('Nothing saved yet.'),
        );
        return;
      }
      case 'sessions': {
        const rows = await this.#o.store.list();
        this.#r.line(
          formatSessionList(rows, c, agent.sessionId) || c.dim(`No sessions in ${this.#o.store.dir}.`),
        );
        return;
      }
      case 'resume': {
        if (!arg) {
          this.#r.line(c.dim('Usage: /resume <id> (/sessions lists them)'));
          return;
        }
        if (arg === agent.sessionId) {
          this.#r.line(c.dim('That is the current session.'));
          return;
        }
        if (!(await this.#o.store.load(arg).catch(() => undefined))) {
          this.#r.line(c.red(`No readable session "${arg}" (/sessions lists them).`));
          return;
        }
        try {
          await this.#switchTo(arg);
        } catch (error) {
          this.#r.line(c.red(`Cannot open session "${arg}": ${(error as Error).message}`));
          return;
        }
        await this.#continuePending();
        return;
      }
      default:
        this.#r.line(c.dim(`Unknown command /${name}. /help lists them.`));
        return;
    }
  }

  #printMessage(m: Message, withTools = false): void {
    const { c } = this.#r;
    const label = `${this.#bundle.icon ? `${this.#bundle.icon} ` : ''}${this.#bundle.name}`;
    if (m.role === 'user') this.#r.say(c.bold(c.green('you ›')), 5, text(m));
    else if (m.role === 'assistant') {
      if (text(m)) this.#r.say(c.bold(c.cyan(`${label} ›`)), Array.from(label).length + 2, text(m));
      if (withTools) {
        for (const call of m.tool_calls ?? []) {
          if (call.type !== 'function') continue;
          let args: unknown = call.function.arguments;
          try {
            args = JSON.parse(call.function.arguments);
          } catch {
            // shown as sent
          }
          this.#r.line(c.dim(`  ↳ ${call.function.name} ${this.#r.mainArgument(args)}`));
        }
      }
    } else if (m.role === 'tool' && withTools) {
      this.#r.line(c.dim(`    → ${oneLine(text(m), 70)}`));
    }
  }

  async #close(): Promise<void> {
    const { c } = this.#r;
    this.#r.pause();
    const id = this.#agent.sessionId;
    await this.#detach();
    const resume = this.#o.resumeCommand?.(id) ?? `agentloop chat --resume ${id}`;
    this.#r.line(c.dim(`Session ${id} is saved. Continue it with:`));
    this.#r.line(c.dim(`  ${resume}`));
  }
}

function text(m: Message): string {
  const content = (m as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').join('');
  return '';
}

/** The arguments of a call as indented lines: one per field, long values cut with their length. */
function describeArgs(args: unknown): string[] {
  if (typeof args !== 'object' || args === null) return [oneLine(args, 100)];
  return Object.entries(args as Record<string, unknown>).map(([key, value]) => {
    const shown = typeof value === 'string' ? value : JSON.stringify(value);
    const first = shown.split('\n')[0]!;
    const more = shown.length > first.length || first.length > 90 ? ` … (${shown.length} chars)` : '';
    return `${key}: ${oneLine(first, 90)}${more}`;
  });
}
