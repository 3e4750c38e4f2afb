import { argumentsView } from './arguments.js';
import { h } from './dom.js';

interface ToolCallPart {
  id: string;
  function: { name: string; arguments: string };
}

interface MessageLike {
  role: string;
  content?: unknown;
  tool_calls?: ToolCallPart[];
  tool_call_id?: string;
  name?: string;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : JSON.stringify(p),
      )
      .join('\n');
  if (content === null || content === undefined) return '';
  return JSON.stringify(content);
}

/** "Fork here" buttons: the transcript seq to fork at, by the index of the message it follows. */
export interface ForkButtons {
  points: ReadonlyMap<number, number>;
  fork: (seq: number, button: HTMLButtonElement) => void;
}

/** The "Fork here" button after a message that is a rest point. */
function forkButton(seq: number, buttons: ForkButtons): HTMLButtonElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'fork-here',
      'data-seq': seq,
      title: `fork the session after transcript entry ${seq}`,
    },
    'Fork here',
  ) as HTMLButtonElement;
  button.addEventListener('click', () => buttons.fork(seq, button));
  return button;
}

/**
 * Renders the conversation as the model sees it: system messages and tool results folded,
 * assistant tool calls listed under their message, the text being streamed last; with `forks`, a
 * "Fork here" button after each message that is a rest point of a saved session.
 */
export function renderTranscript(
  el: HTMLElement,
  messages: readonly unknown[],
  partial: string,
  forks?: ForkButtons,
): void {
  const names = new Map<string, string>();
  const items: HTMLElement[] = [];
  messages.forEach((raw, index) => {
    const m = raw as MessageLike;
    const text = textOf(m.content);
    if (m.role === 'system' || m.role === 'developer') {
      items.push(
        h(
          'details',
          { class: 'msg role-system', 'data-index': index },
          h('summary', {}, `${m.role} · ${text.length} chars`),
          h('pre', {}, text),
        ),
      );
    } else if (m.role === 'tool') {
      const name = names.get(m.tool_call_id ?? '') ?? 'tool';
      items.push(
        h(
          'details',
          { class: 'msg role-tool', 'data-index': index, 'data-tool-call-id': m.tool_call_id ?? '' },
          h('summary', {}, `result of ${name} · ${m.tool_call_id ?? ''} · ${text.length} chars`),
          h('pre', {}, text),
        ),
      );
    } else {
      const calls = m.tool_calls ?? [];
      for (const c of calls) names.set(c.id, c.function?.name ?? 'tool');
      items.push(
        h(
          'div',
          { class: `msg role-${m.role}`, 'data-index': index },
          h('div', { class: 'who' }, m.role),
          text ? h('div', { class: 'body' }, text) : null,
          calls.length > 0
            ? h(
                'ul',
                { class: 'calls' },
                ...calls.map((c) =>
                  h(
                    'li',
                    {},
                    h('code', {}, c.function?.name ?? '?'),
                    ' ',
                    h('div', { class: 'args' }, argumentsView(c.function?.arguments ?? '')),
                  ),
                ),
              )
            : null,
        ),
      );
    }
    const seq = forks?.points.get(index);
    if (forks && seq !== undefined) items.push(forkButton(seq, forks));
  });
  if (partial) {
    items.push(
      h(
        'div',
        { class: 'msg role-assistant streaming' },
        h('div', { class: 'who' }, 'assistant (streaming)'),
        h('div', { class: 'body' }, partial),
      ),
    );
  }
  const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  // Keep folds the user opened.
  const open = new Set(
    Array.from(el.querySelectorAll<HTMLElement>('details[open]'), (d) => d.dataset.index ?? ''),
  );
  for (const item of items)
    if (item instanceof HTMLDetailsElement && open.has(item.dataset.index ?? '')) item.open = true;
  el.replaceChildren(...items);
  if (atBottom) el.scrollTop = el.scrollHeight;
}
