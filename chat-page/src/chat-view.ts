// The chat page's DOM. Everything shown comes from the server and is treated as hostile: text goes in
// with textContent only, never as markup.

/** One interrupt as the page shows it (AG-UI's `Interrupt`, the fields the page reads). */
export interface ShownInterrupt {
  id: string;
  message?: string;
  metadata?: unknown;
}

/** How the reader answered an approval. */
export type ApprovalAnswer = { approved: true } | { approved: false; reason?: string };

/** The run's state as agentloop sends it (`STATE_SNAPSHOT` / `STATE_DELTA`): the plan and the usage. */
interface RunState {
  plan?: { explanation?: string; steps?: { step?: unknown; status?: unknown }[] } | null;
  usage?: { totalTokens?: unknown; costUsd?: unknown } | null;
}

const STEP_LABELS: Record<string, string> = {
  Thinking: 'thinking…',
  ExecutingTool: 'running a tool…',
  Compacting: 'compacting the conversation…',
};

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function byId(id: string): HTMLElement {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page lacks #${id}`);
  return node;
}

/** The conversation, the tool lines, the approvals, the plan, the usage and the status line. */
export class ChatView {
  readonly #log = byId('log');
  readonly #status = byId('status');
  readonly #usage = byId('usage');
  readonly #plan = byId('plan');
  readonly #planEmpty = byId('plan-empty');
  readonly #texts = new Map<string, HTMLElement>();
  readonly #tools = new Map<string, { line: HTMLElement; name: string; args: string }>();
  readonly #approvals = new Map<string, HTMLElement>();

  #append(node: HTMLElement): HTMLElement {
    const atBottom = this.#log.scrollTop + this.#log.clientHeight >= this.#log.scrollHeight - 8;
    this.#log.append(node);
    if (atBottom) this.#log.scrollTop = this.#log.scrollHeight;
    return node;
  }

  user(text: string): void {
    this.#append(element('div', 'msg user', text));
  }

  /** A text message starts; one seen before (cut off by a lost connection) starts over. */
  textStart(messageId: string): void {
    const shown = this.#texts.get(messageId);
    if (shown) shown.textContent = '';
    else this.#texts.set(messageId, this.#append(element('div', 'msg assistant')));
  }

  textDelta(messageId: string, delta: string): void {
    if (!this.#texts.has(messageId)) this.textStart(messageId);
    this.#texts.get(messageId)!.append(delta);
  }

  /** A tool call starts (one seen before starts over). */
  toolStart(toolCallId: string, name: string): void {
    const shown = this.#tools.get(toolCallId);
    const line = shown?.line ?? this.#append(element('div', 'tool'));
    line.dataset.toolCallId = toolCallId;
    this.#tools.set(toolCallId, { line, name, args: '' });
    this.#drawTool(toolCallId);
  }

  toolArgs(toolCallId: string, delta: string): void {
    const tool = this.#tools.get(toolCallId);
    if (!tool) return;
    tool.args += delta;
    this.#drawTool(toolCallId);
  }

  toolResult(toolCallId: string, content: string): void {
    const tool = this.#tools.get(toolCallId);
    const line = tool?.line ?? this.#append(element('div', 'tool'));
    line.querySelector('.result')?.remove();
    const shortened = content.length > 400 ? `${content.slice(0, 400)}…` : content;
    line.append(element('div', 'result', `→ ${shortened}`));
  }

  #drawTool(toolCallId: string): void {
    const tool = this.#tools.get(toolCallId)!;
    const result = tool.line.querySelector('.result');
    tool.line.replaceChildren(element('span', 'call', `🔧 ${tool.name}(${tool.args})`));
    if (result) tool.line.append(result);
  }

  /** The busy state the agent is in (a step), or none. */
  step(name: string | undefined): void {
    this.#status.textContent = name === undefined ? '' : (STEP_LABELS[name] ?? `${name}…`);
  }

  status(text: string): void {
    this.#status.textContent = text;
  }

  notice(text: string): void {
    this.#append(element('div', 'notice', text));
  }

  error(text: string): void {
    this.#append(element('div', 'error', text));
  }

  /** The run's state: the plan's steps and the tokens and cost so far. */
  state(value: unknown): void {
    const state = (value && typeof value === 'object' ? value : {}) as RunState;
    const steps = Array.isArray(state.plan?.steps) ? state.plan.steps : [];
    this.#plan.replaceChildren(
      ...steps.map((s) => {
        const item = element('li', typeof s.status === 'string' ? s.status : '', String(s.step ?? ''));
        if (typeof s.status === 'string') item.title = s.status.replace('_', ' ');
        return item;
      }),
    );
    this.#planEmpty.hidden = steps.length > 0;
    const usage = state.usage;
    if (usage && typeof usage.totalTokens === 'number') {
      const cost = typeof usage.costUsd === 'number' ? `$${usage.costUsd.toFixed(4)}` : 'cost unknown';
      this.#usage.textContent = `${usage.totalTokens} tokens · ${cost}`;
    }
  }

  /** An approval card per interrupt, with Approve and Reject (with a reason) buttons. */
  approvals(interrupts: readonly ShownInterrupt[], answer: (id: string, a: ApprovalAnswer) => void): void {
    for (const interrupt of interrupts) {
      this.#approvals.get(interrupt.id)?.remove();
      const meta = (
        interrupt.metadata && typeof interrupt.metadata === 'object' ? interrupt.metadata : {}
      ) as {
        toolName?: unknown;
        args?: unknown;
      };
      const card = element('div', 'approval');
      card.dataset.interruptId = interrupt.id;
      card.append(element('strong', undefined, interrupt.message ?? 'Approve this call?'));
      if (meta.toolName !== undefined) {
        card.append(
          element('pre', 'args', `${String(meta.toolName)} ${JSON.stringify(meta.args ?? {}, null, 2)}`),
        );
      }
      const reason = element('input', 'reason');
      reason.placeholder = 'reason (for a rejection)';
      const approve = element('button', 'approve', 'Approve');
      const reject = element('button', 'reject', 'Reject');
      approve.type = reject.type = 'button';
      const answered = (text: string, a: ApprovalAnswer) => {
        card.replaceChildren(card.firstChild ?? '', element('div', 'answered', text));
        answer(interrupt.id, a);
      };
      approve.addEventListener('click', () => answered('approved', { approved: true }));
      reject.addEventListener('click', () => {
        const why = reason.value.trim();
        answered(why ? `rejected: ${why}` : 'rejected', {
          approved: false,
          ...(why ? { reason: why } : {}),
        });
      });
      card.append(approve, reject, reason);
      this.#approvals.set(interrupt.id, this.#append(card));
    }
  }

  /** Enables or disables the approval buttons still on the page (one run at a time). */
  approvalsEnabled(enabled: boolean): void {
    for (const button of this.#log.querySelectorAll<HTMLButtonElement>('.approval button')) {
      button.disabled = !enabled;
    }
  }
}
