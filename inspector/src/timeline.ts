import type { BusEvent } from '../../src/inspector/protocol.js';
import { clock, h, show } from './dom.js';

/** Timeline categories, each with a filter checkbox. */
export const CATEGORIES = ['turns', 'states', 'tools', 'approvals', 'warnings', 'errors', 'usage'] as const;
export type Category = (typeof CATEGORIES)[number];

/** One row of the timeline: a bus event, or a tool call (start and end folded together). */
export interface TimelineRow {
  category: Category;
  time: number;
  turn: number;
  iteration: number;
  kind: string;
  text: string;
  detail?: string;
  outcome?: 'ok' | 'error' | 'running' | 'warning';
  durationMs?: number;
}

const CATEGORY_OF: Record<string, Category> = {
  turn_start: 'turns',
  turn_end: 'turns',
  iteration: 'turns',
  thinking: 'turns',
  state_change: 'states',
  tool_call_start: 'tools',
  tool_call_end: 'tools',
  tool_progress: 'tools',
  approval_requested: 'approvals',
  approval_resolved: 'approvals',
  limit_warning: 'warnings',
  context_pruned: 'warnings',
  stream_reset: 'warnings',
  error: 'errors',
  usage: 'usage',
};

/** Folds bus events into timeline rows (a tool call's end updates its start row). */
export function timelineRows(events: readonly BusEvent[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const calls = new Map<string, TimelineRow>();
  for (const e of events) {
    const base = { time: e.timestamp, turn: e.turn, iteration: e.iteration, kind: e.type };
    const category = CATEGORY_OF[e.type];
    switch (e.type) {
      case 'turn_start':
        rows.push({ ...base, category: 'turns', text: `turn ${e.turn} started`, detail: show(e.input, 400) });
        break;
      case 'iteration':
        rows.push({
          ...base,
          category: 'turns',
          text: `model call ${e.iteration}${e.maxIterations ? `/${e.maxIterations}` : ''}`,
        });
        break;
      case 'thinking':
        rows.push({ ...base, category: 'turns', text: 'reasoning', detail: show(e.content, 400) });
        break;
      case 'state_change':
        rows.push({ ...base, category: 'states', text: `${e.previous ?? '∅'} → ${e.state}` });
        break;
      case 'tool_call_start': {
        const row: TimelineRow = {
          ...base,
          category: 'tools',
          text: String(e.name),
          detail: show(e.args, 300),
          outcome: 'running',
        };
        calls.set(String(e.toolCallId), row);
        rows.push(row);
        break;
      }
      case 'tool_progress': {
        // The running call's row shows its latest report; nothing is added to the timeline.
        const row = calls.get(String(e.toolCallId));
        const count =
          e.progress === undefined
            ? ''
            : e.total === undefined
              ? `${e.progress}`
              : `${e.progress}/${e.total}`;
        const report = [e.message === undefined ? '' : show(e.message, 120), count].filter(Boolean).join(' ');
        if (row && row.outcome === 'running' && report) row.text = `${String(e.name)} · ${report}`;
        break;
      }
      case 'tool_call_end': {
        let row = calls.get(String(e.toolCallId));
        if (row) row.text = String(e.name);
        if (!row) {
          row = { ...base, category: 'tools', text: String(e.name), detail: show(e.args, 300) };
          rows.push(row);
        }
        row.durationMs = Number(e.durationMs ?? 0);
        row.outcome = e.error !== undefined ? 'error' : 'ok';
        row.detail = `${row.detail ?? ''} → ${show(e.error ?? e.result, 300)}`;
        break;
      }
      case 'approval_requested': {
        const pending = (e.pending as { name: string; args: unknown }[] | undefined) ?? [];
        rows.push({
          ...base,
          category: 'approvals',
          text: `approval needed: ${pending.map((p) => p.name).join(', ')}`,
          detail: pending.map((p) => `${p.name} ${show(p.args, 200)}`).join('; '),
          outcome: 'warning',
        });
        break;
      }
      case 'approval_resolved':
        rows.push({
          ...base,
          category: 'approvals',
          text: `${e.approved ? 'approved' : 'rejected'} ${e.toolCallId}`,
          ...(e.reason ? { detail: String(e.reason) } : {}),
          outcome: e.approved ? 'ok' : 'error',
        });
        break;
      case 'limit_warning':
        rows.push({
          ...base,
          category: 'warnings',
          text: `limit: ${e.limit}`,
          detail: String(e.message),
          outcome: 'warning',
        });
        break;
      case 'context_pruned':
        rows.push({
          ...base,
          category: 'warnings',
          text: 'context pruned',
          detail: `${e.prunedMessages} tool results, ${e.removedTokens} tokens`,
          outcome: 'warning',
        });
        break;
      case 'stream_reset':
        rows.push({
          ...base,
          category: 'warnings',
          text: 'stream discarded',
          detail: `${e.reason} (attempt ${e.attempt})`,
          outcome: 'warning',
        });
        break;
      case 'usage': {
        const u = e.usage as { promptTokens: number; completionTokens: number } | undefined;
        rows.push({
          ...base,
          category: 'usage',
          text: `tokens ${u?.promptTokens ?? 0} in, ${u?.completionTokens ?? 0} out`,
        });
        break;
      }
      case 'turn_end':
        // A call the turn's end left unfinished (an interrupt stops it; no end event comes).
        for (const row of calls.values()) {
          if (row.outcome !== 'running') continue;
          row.outcome = 'error';
          row.detail = `${row.detail ?? ''} → not finished: the turn ended (${e.terminateReason})`;
        }
        rows.push({
          ...base,
          category: 'turns',
          text: `turn ${e.turn} ended: ${e.terminateReason} after ${e.iterations} model calls`,
          detail: show(e.response, 300),
          outcome: e.terminateReason === 'completed' || e.terminateReason === 'question' ? 'ok' : 'error',
        });
        break;
      case 'error':
        rows.push({
          ...base,
          category: 'errors',
          text: 'error',
          detail: String(e.message),
          outcome: 'error',
        });
        break;
      default:
        rows.push({ ...base, category: category ?? 'turns', text: e.type });
    }
  }
  return rows;
}

/** Renders rows matching the filters (newest at the bottom; the last 600). */
export function renderTimeline(
  list: HTMLElement,
  rows: readonly TimelineRow[],
  shown: ReadonlySet<Category>,
  search: string,
): void {
  const needle = search.trim().toLowerCase();
  const visible = rows.filter(
    (r) =>
      shown.has(r.category) &&
      (needle === '' || `${r.text} ${r.detail ?? ''}`.toLowerCase().includes(needle)),
  );
  const items = visible
    .slice(-600)
    .map((r) =>
      h(
        'li',
        { class: `row cat-${r.category}${r.outcome ? ` outcome-${r.outcome}` : ''}`, 'data-kind': r.kind },
        h('span', { class: 'time' }, clock(r.time)),
        h('span', { class: 'where' }, `t${r.turn}·i${r.iteration}`),
        h('span', { class: 'text' }, r.text),
        r.durationMs !== undefined && h('span', { class: 'duration' }, `${r.durationMs.toFixed(1)} ms`),
        r.outcome === 'running' && h('span', { class: 'duration' }, 'running…'),
        r.detail ? h('span', { class: 'detail' }, r.detail) : null,
      ),
    );
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(...items);
  if (atBottom) list.scrollTop = list.scrollHeight;
}
