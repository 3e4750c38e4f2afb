import type { SessionInfo, SessionStatus } from '../../src/inspector/protocol.js';
import { h, replace, show } from './dom.js';

/**
 * The sessions list: subagents under their parent; each row the agent's name and state, where the
 * session comes from (live, saved with its date and time) and what it is about (its title).
 */
export function renderSessionList(
  list: HTMLElement,
  order: readonly SessionInfo[],
  selected: string | undefined,
  onPick: (id: string) => void,
): void {
  const children = new Map<string, SessionInfo[]>();
  const roots: SessionInfo[] = [];
  const ids = new Set(order.map((s) => s.id));
  for (const s of order) {
    if (s.parentId && ids.has(s.parentId)) {
      const kids = children.get(s.parentId) ?? [];
      kids.push(s);
      children.set(s.parentId, kids);
    } else roots.push(s);
  }
  const item = (s: SessionInfo): HTMLElement => {
    const kids = children.get(s.id) ?? [];
    const button = h(
      'button',
      { class: `session${s.id === selected ? ' selected' : ''}`, 'data-session': s.id, type: 'button' },
      h('span', { class: 'name' }, s.name),
      h('span', { class: `badge state-${s.state}` }, s.state),
      h(
        'span',
        { class: `source ${s.live ? 'live' : s.source}` },
        s.live ? 'live' : s.source === 'saved' ? 'saved' : 'ended',
        s.updatedAt ? h('time', { datetime: s.updatedAt }, ` · ${dateTime(s.updatedAt)}`) : null,
      ),
      // The whole title on hover; the row cuts it with one ellipsis (CSS) to its width.
      h('span', { class: 'title', title: s.title ?? s.id }, s.title ? show(s.title, 120) : s.id),
    );
    button.addEventListener('click', () => onPick(s.id));
    return h('li', {}, button, kids.length ? h('ul', { class: 'children' }, ...kids.map(item)) : null);
  };
  replace(list, ...roots.map(item));
  if (order.length === 0) replace(list, h('li', { class: 'empty' }, 'No sessions yet.'));
}

/** The states the last turn went through; what is known instead when they were not seen. */
export function lastTurnText(
  session: { info: SessionInfo; status: SessionStatus } | undefined,
  names: readonly string[],
): string {
  if (!session) return '–';
  if (names.length > 0) return names.join(' → ');
  const turns = session.status.turn;
  if (session.info.source === 'saved' && turns > 0) {
    // A saved session's transcript keeps messages and tool calls, not the states between them.
    const ended = session.status.terminateReason ? ` (${session.status.terminateReason})` : '';
    return `turn ${turns} ended in ${session.status.state}${ended}; saved sessions do not keep the states it went through`;
  }
  return turns > 0 ? `turn ${turns}, states not seen by this page` : 'none yet: no message sent';
}

/** `2026-11-23 09:42` in the page's time zone. */
function dateTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
