import type {
  BatchItem,
  BusEvent,
  ChartDefinition,
  ClientMessage,
  InspectionRecord,
  ServerMessage,
  SessionInfo,
  SessionStatus,
  SessionSync,
} from '../../src/inspector/protocol.js';
import { approvalCard } from './approval-card.js';
import { activeIds, type ChartView, drawChart } from './chart.js';
import { byId, h, replace } from './dom.js';
import { type Ack, forkAction } from './fork-request.js';
import { renderPlan } from './plan.js';
import { lastTurnText, renderSessionList } from './session-list.js';
import { CATEGORIES, type Category, renderTimeline, timelineRows } from './timeline.js';
import { renderTranscript } from './transcript.js';

/** What the page knows about one session. */
interface PageSession {
  info: SessionInfo;
  status: SessionStatus;
  messages: unknown[];
  events: BusEvent[];
  partial: string;
  /** Where a saved session may be forked: transcript seq by message index. */
  forkPoints: Map<number, number>;
  /** State node ids entered since the last turn started, in order. */
  path: string[];
  /** The last inspection events (for the status panel). */
  inspections: InspectionRecord[];
}

const page = {
  chart: undefined as ChartDefinition | undefined,
  chartView: undefined as ChartView | undefined,
  sessions: new Map<string, PageSession>(),
  order: [] as SessionInfo[],
  selected: undefined as string | undefined,
  /** The user picked a session: do not follow new ones. */
  pinned: false,
  shown: new Set<Category>(CATEGORIES.filter((c) => c !== 'usage')),
  search: '',
  ws: undefined as WebSocket | undefined,
  nextId: 1,
  acks: new Map<number, (ack: Ack) => void>(),
  dirty: { list: true, chart: true, status: true, timeline: true, transcript: true },
  frame: 0,
};

// ---- state -------------------------------------------------------------------------------------

/** The path of the last turn from the bus events: every state entered since the last `turn_start`. */
function pathFromEvents(rootId: string, events: readonly BusEvent[]): string[] {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === 'turn_start') {
      start = i;
      break;
    }
  }
  const path: string[] = [];
  const from = start === -1 ? 0 : start;
  // The state the turn left (AwaitingInput, Completed, ...) is where the path starts.
  for (let i = from - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'state_change') {
      path.push(`${rootId}.${String(e.state)}`);
      break;
    }
  }
  for (let i = from; i < events.length; i++) {
    const e = events[i]!;
    if (e.type === 'state_change') path.push(`${rootId}.${String(e.state)}`);
  }
  return path;
}

function applySync(sync: SessionSync): void {
  const rootId = page.chart?.id ?? 'agent';
  const existing = page.sessions.get(sync.info.id);
  page.sessions.set(sync.info.id, {
    info: sync.info,
    status: sync.status,
    messages: sync.messages,
    events: sync.events,
    partial: sync.partial,
    forkPoints: new Map((sync.forkPoints ?? []).map((p) => [p.index, p.seq])),
    path: pathFromEvents(rootId, sync.events),
    inspections: existing?.inspections ?? [],
  });
  markAll();
}

function applyItem(item: BatchItem): void {
  const session = page.sessions.get(item.session);
  if (!session) return;
  const selected = item.session === page.selected;
  const rootId = page.chart?.id ?? 'agent';
  switch (item.k) {
    case 'bus': {
      const e = item.event;
      session.events.push(e);
      if (session.events.length > 5000) session.events.splice(0, session.events.length - 5000);
      if (e.type === 'turn_start') {
        const before = session.path.at(-1);
        session.path = before ? [before] : [];
        session.partial = '';
      }
      if (e.type === 'state_change') {
        const id = `${rootId}.${String(e.state)}`;
        if (session.path.at(-1) !== id) session.path.push(id);
      }
      if (e.type === 'iteration' || e.type === 'stream_reset') session.partial = '';
      if (selected) page.dirty.timeline = page.dirty.chart = true;
      break;
    }
    case 'inspect': {
      session.inspections.push(item.event);
      if (session.inspections.length > 200) session.inspections.shift();
      const value = item.event.snapshot?.value;
      // Sub-states: a snapshot value with nested states adds its deepest node to the path.
      if (value && typeof value === 'object') {
        const deepest = [...activeIds(rootId, value)].at(-1);
        if (deepest && session.path.at(-1) !== deepest) session.path.push(deepest);
        if (selected) page.dirty.chart = true;
      }
      break;
    }
    case 'stream':
      session.partial += item.text;
      if (selected) page.dirty.transcript = true;
      break;
    case 'messages':
      if (item.from > session.messages.length) {
        request({ t: 'sync', id: 0, session: item.session });
        break;
      }
      session.messages.length = item.from;
      session.messages.push(...item.items);
      session.partial = '';
      if (selected) page.dirty.transcript = true;
      break;
    case 'status': {
      const stateChanged = session.status.state !== item.status.state;
      session.status = item.status;
      if (item.status.state !== 'Thinking' && session.partial) {
        session.partial = '';
        if (selected) page.dirty.transcript = true;
      }
      session.info = { ...session.info, state: item.status.state };
      const row = page.order.find((s) => s.id === item.session);
      if (row && row.state !== item.status.state) {
        row.state = item.status.state;
        page.dirty.list = true;
      }
      if (selected) {
        page.dirty.status = true;
        if (stateChanged) page.dirty.chart = true;
      }
      break;
    }
  }
}

function onMessage(message: ServerMessage): void {
  switch (message.t) {
    case 'hello':
      page.chart = message.chart;
      page.sessions.clear();
      page.order = message.sessions;
      page.chartView = undefined;
      chooseSession();
      markAll();
      break;
    case 'sessions':
      page.order = message.sessions;
      chooseSession();
      markAll();
      break;
    case 'sync':
      applySync(message.session);
      break;
    case 'batch':
      for (const item of message.items) applyItem(item);
      break;
    case 'ack':
      page.acks.get(message.id)?.(message);
      page.acks.delete(message.id);
      break;
    case 'error':
      console.warn(`inspector server: ${message.error}`);
      break;
  }
  schedule();
}

/** Follows the newest running session unless the user picked one. */
function chooseSession(): void {
  const ids = new Set(page.order.map((s) => s.id));
  if (page.selected && !ids.has(page.selected)) page.selected = undefined;
  if (page.pinned && page.selected) return;
  const live = page.order.filter((s) => s.live);
  page.selected = (live.at(-1) ?? page.order.find((s) => s.id === page.selected) ?? page.order[0])?.id;
}

function markAll(): void {
  page.dirty = { list: true, chart: true, status: true, timeline: true, transcript: true };
}

// ---- connection --------------------------------------------------------------------------------

function request(message: ClientMessage): Promise<Ack> {
  const ws = page.ws;
  if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.resolve({ ok: false, error: 'not connected' });
  const id = page.nextId++;
  const withId = { ...message, id } as ClientMessage;
  return new Promise((resolve) => {
    page.acks.set(id, resolve);
    ws.send(JSON.stringify(withId));
  });
}

/** The server's token, from this page's own URL (`/?token=...`): the WebSocket needs it too. */
const token = new URLSearchParams(location.search).get('token') ?? '';

function connect(delay = 500): void {
  const conn = byId('conn');
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const ws = new WebSocket(`${scheme}://${location.host}/ws?token=${encodeURIComponent(token)}`);
  page.ws = ws;
  ws.onopen = () => {
    conn.textContent = 'connected';
    conn.className = 'conn ok';
    delay = 500;
  };
  ws.onmessage = (event) => onMessage(JSON.parse(String(event.data)) as ServerMessage);
  ws.onclose = () => {
    conn.textContent = 'disconnected: retrying…';
    conn.className = 'conn down';
    void tokenRefused().then((refused) => {
      if (!refused) {
        setTimeout(() => connect(Math.min(delay * 2, 5000)), delay);
        return;
      }
      // A new server on this port (a restart) has a new token: retrying with this one cannot work.
      conn.textContent = 'this address is no longer valid: open the one agentloop printed';
    });
  };
}

/** Whether the server now refuses this page's token (401), as opposed to being unreachable. */
async function tokenRefused(): Promise<boolean> {
  try {
    return (await fetch(location.href, { method: 'HEAD', cache: 'no-store' })).status === 401;
  } catch {
    return false;
  }
}

// ---- rendering ---------------------------------------------------------------------------------

function schedule(): void {
  if (page.frame) return;
  page.frame = requestAnimationFrame(() => {
    page.frame = 0;
    render();
  });
}

function render(): void {
  const session = page.selected ? page.sessions.get(page.selected) : undefined;
  document.body.dataset.session = page.selected ?? '';
  document.body.dataset.state = session?.status.state ?? '';
  if (page.dirty.list) renderSessions();
  if (page.dirty.chart) renderChart(session);
  if (page.dirty.status) {
    renderStatus(session);
    renderPlan(byId('plan'), session?.status.plan);
  }
  if (page.dirty.timeline) {
    renderTimeline(byId('timeline'), session ? timelineRows(session.events) : [], page.shown, page.search);
  }
  if (page.dirty.transcript) renderTranscriptOf(session);
  page.dirty = { list: false, chart: false, status: false, timeline: false, transcript: false };
}

function renderTranscriptOf(session: PageSession | undefined): void {
  const forks =
    session && session.forkPoints.size > 0
      ? { points: session.forkPoints, fork: forkAction(request, session.info.id, openSession) }
      : undefined;
  renderTranscript(byId('transcript'), session?.messages ?? [], session?.partial ?? '', forks);
}

/** Shows session `id` and stops following new ones (a pick in the list, a fork just made). */
function openSession(id: string): void {
  page.selected = id;
  page.pinned = true;
  markAll();
  schedule();
}

function renderSessions(): void {
  renderSessionList(byId('session-list'), page.order, page.selected, openSession);
}

function renderChart(session: PageSession | undefined): void {
  const svg = byId('chart') as unknown as SVGSVGElement;
  if (!page.chart) return;
  if (!page.chartView) page.chartView = drawChart(svg, page.chart);
  const active = session ? activeIds(page.chart.id, session.status.value) : new Set<string>();
  page.chartView.update(active, session?.path ?? []);
  byId('state-label').textContent = session ? session.status.state : '';
  const names = (session?.path ?? []).map((id) => id.slice(page.chart!.id.length + 1));
  replace(byId('path'), h('span', { class: 'label' }, 'last turn: '), lastTurnText(session, names));
}

function renderStatus(session: PageSession | undefined): void {
  const dl = byId('status');
  if (!session) {
    replace(dl);
    replace(byId('approvals'));
    return;
  }
  const st = session.status;
  const row = (k: string, v: string, attrs: Record<string, string> = {}) => [
    h('dt', {}, k),
    h('dd', attrs, v),
  ];
  replace(
    dl,
    ...row('session', session.info.id),
    ...row('agent', session.info.name),
    ...row('state', typeof st.value === 'string' ? st.value : JSON.stringify(st.value), {
      id: 'current-state',
    }),
    ...row('turn', `${st.turn} · model call ${st.iteration}/${st.maxIterations || '–'}`),
    ...row('last turn ended', st.terminateReason ?? '–'),
    ...row('tokens (turn)', usage(st.turnUsage)),
    ...row('tokens (total)', usage(st.totalUsage)),
    ...row('messages', String(st.messageCount)),
    ...(st.error ? row('error', st.error.message, { class: 'error' }) : []),
  );
  const approvals = byId('approvals');
  if (st.pending.length === 0) {
    replace(
      approvals,
      h(
        'p',
        { class: 'empty' },
        session.info.live ? 'Nothing is waiting for approval.' : 'Not running here.',
      ),
    );
    return;
  }
  replace(
    approvals,
    ...st.pending.map((p) =>
      approvalCard(p, session.info.live, (decision) =>
        request({ ...decision, id: 0, session: session.info.id, toolCallId: p.toolCallId }),
      ),
    ),
  );
}

function usage(u: { promptTokens: number; completionTokens: number; totalTokens: number }): string {
  return `${u.totalTokens} (${u.promptTokens} in, ${u.completionTokens} out)`;
}

function setupFilters(): void {
  const filters = byId('filters');
  for (const category of CATEGORIES) {
    const box = h('input', {
      type: 'checkbox',
      'data-category': category,
      checked: page.shown.has(category),
    });
    box.addEventListener('change', () => {
      if (box.checked) page.shown.add(category);
      else page.shown.delete(category);
      page.dirty.timeline = true;
      schedule();
    });
    filters.append(h('label', { class: `filter cat-${category}` }, box, category));
  }
  const search = h('input', { type: 'search', placeholder: 'filter text…', id: 'timeline-search' });
  search.addEventListener('input', () => {
    page.search = search.value;
    page.dirty.timeline = true;
    schedule();
  });
  filters.append(search);
}

setupFilters();
connect();
