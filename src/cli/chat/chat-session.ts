import type { Agent } from '../../agent/agent.js';
import { DEFAULTS } from '../../defaults.js';
import type { AgentEvent, ToolCallInfo } from '../../machines/emitted-events.js';
import type { FileSessionStore } from '../../session/file-store/file-session-store.js';
import type { SessionRecord } from '../../session/session-store.js';
import type { ApprovalPolicy } from '../../tools/tool-call.js';
import type { ChatPersona } from '../cli-agent.js';
import { formatCostUsd } from '../terminal/cost-text.js';
import { terminalSafe } from '../terminal/terminal-safe.js';
import { askApproval } from './chat-approval-prompt.js';
import { showResumeSummary } from './chat-history-view.js';
import type { ChatInput } from './chat-input.js';
import type { ChatRenderer } from './chat-renderer.js';
import { runSlashCommand, type SlashCommandOutcome } from './chat-slash-commands.js';

/** What a {@link ChatSession} reads from, draws on, and opens sessions with. */
export interface ChatSessionOptions {
  input: ChatInput;
  renderer: ChatRenderer;
  store: FileSessionStore;
  /** One line saying which model answers. */
  connection: string;
  /** One line naming the MCP config files read (the project's `.mcp.json`, `--mcp-config`), if any. */
  mcpSources?: string;
  /** Opens (restores or creates) a session's agent. */
  open(id: string): Promise<{ agent: Agent; persona: ChatPersona; record: SessionRecord | undefined }>;
  /** The command that continues a session, for the goodbye line. */
  resumeCommand?: (id: string) => string;
  /** The approval policy the agents are made with (`/tools` says which tools ask by it). */
  approval?: ApprovalPolicy;
}

/** One chat: the prompt loop over a session's agent, with approvals, interrupts and slash commands. */
export class ChatSession {
  readonly #o: ChatSessionOptions;
  #agent!: Agent;
  #bundle!: ChatPersona;
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
      this.#r.line(c.red(`Cannot open session "${id}": ${terminalSafe((error as Error).message)}`));
      return 1;
    }
    if (isNew) this.#r.line(`\n${terminalSafe(this.#bundle.greeting)}\n`);
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
      await this.#turn(() => this.#agent.send(this.#bundle.menuChoice?.(text) ?? text));
    }
    await this.#close();
    return 0;
  }

  /** Opens session `id` (restored or new) and makes it current. */
  async #switchTo(id: string): Promise<void> {
    const { c } = this.#r;
    const { agent, persona, record } = await this.#o.open(id);
    try {
      await agent.ready();
    } catch (error) {
      agent.stop();
      throw error;
    }
    if (this.#agent) await this.#detach();
    this.#agent = agent;
    this.#bundle = persona;
    this.#r.useRedactor(agent.redactor);
    this.#r.usePathVariables(persona.pathVariables);
    this.#offs.push(agent.on('*', (event: AgentEvent) => this.#r.handle(event)));
    const title = terminalSafe(
      `${persona.icon ? `${persona.icon} ` : ''}${persona.name}${persona.title ? `, ${persona.title}` : ''}`,
    );
    this.#r.line(`${c.bold('agentloop chat')} · ${title}`);
    this.#r.line(c.dim(`model: ${this.#o.connection}`));
    if (this.#o.mcpSources) this.#r.line(c.dim(terminalSafe(this.#o.mcpSources)));
    this.#r.line(
      c.dim(
        `session ${agent.sessionId} (${record ? `resumed, ${record.turns ?? 0} turns, saved ${record.state}` : 'new'})`,
      ),
    );
    this.#r.line(c.dim('/help for commands · Ctrl+C stops a turn; on an empty line it leaves'));
    if (record) showResumeSummary(this.#r, agent, persona, record);
  }

  async #detach(): Promise<void> {
    for (const off of this.#offs.splice(0)) off();
    // Its writes made durable and its MCP servers ended.
    await this.#agent.close();
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
        await askApproval(call, { agent, renderer: this.#r, ask: (prompt) => this.#ask(prompt, true) });
      }
    })();
    try {
      const started = start();
      if (started instanceof Promise)
        started.catch((error: unknown) => {
          const message = error instanceof Error ? error.message : String(error);
          this.#r.line(c.red(`error: ${terminalSafe(agent.redactor.redact(message))}`));
        });
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
    // What the session has cost so far, when the model has a price; nothing for one without (a local
    // model): a line saying "unknown" after every turn would be noise, and /usage says it.
    const spent = this.#agent.context.totalUsage.costUsd;
    if (spent !== undefined && spent > 0) this.#r.line(c.dim(`· session cost ${formatCostUsd(spent)}`));
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

  /** Runs a slash command on the current session. */
  #command(line: string): Promise<SlashCommandOutcome> {
    return runSlashCommand(line, {
      agent: this.#agent,
      bundle: this.#bundle,
      renderer: this.#r,
      store: this.#o.store,
      turn: (start) => this.#turn(start),
      switchTo: (id) => this.#switchTo(id),
      continuePending: () => this.#continuePending(),
      ...(this.#o.approval ? { approval: this.#o.approval } : {}),
    });
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
