import type { ChartDefinition, ChartEdge, ChartNode } from '../../src/inspector/protocol.js';
import { fitViewBox, placeLabels, type Rect, textWidth } from './chart-fit.js';
import { s } from './dom.js';

/** A drawn chart whose highlighting can change. */
export interface ChartView {
  /** `active`: node ids active now; `path`: node ids of the last turn in order. */
  update(active: ReadonlySet<string>, path: readonly string[]): void;
}

const NODE_W = 138;
const NODE_H = 44;
/** Room between a box's edge and its name. */
const NAME_PAD = 14;
const COL_GAP = 150;
const ROW_GAP = 40;
const PAD = 28;

/** Widths of a state's texts as drawn (see {@link textWidth}). */
type Measure = (node: ChartNode) => number;

interface Box {
  node: ChartNode;
  x: number;
  y: number;
  w: number;
  h: number;
  rank: number;
}

/** The ids of the active nodes for a state value: `'A'` gives `root.A`; `{ A: 'b' }` gives `root.A`, `root.A.b`. */
export function activeIds(rootId: string, value: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === 'string') out.add(`${prefix}.${v}`);
    else if (v && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        out.add(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, child);
      }
    }
  };
  walk(rootId, value);
  return out;
}

/** Ranks the top-level states by their distance from the initial state along transitions. */
function rankNodes(chart: ChartDefinition, top: ChartNode[], topOf: (id: string) => string | undefined) {
  const rank = new Map<string, number>();
  const start = chart.root.initial ?? top[0]?.id;
  if (!start) return rank;
  rank.set(start, 0);
  const queue = [start];
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const edge of chart.edges) {
      const from = topOf(edge.source);
      const to = topOf(edge.target);
      if (from !== id || to === undefined || rank.has(to)) continue;
      rank.set(to, rank.get(id)! + 1);
      queue.push(to);
    }
  }
  // A detour (a state entered from one state only, that leads back to it: Compacting from Thinking)
  // goes in the column of that state, under it, so that its arrows stay short and clear of the rest.
  for (const node of top) {
    const sources = new Set(
      chart.edges
        .filter((e) => topOf(e.target) === node.id && topOf(e.source) !== node.id)
        .map((e) => topOf(e.source)),
    );
    const [source] = sources;
    if (sources.size !== 1 || source === undefined || !rank.has(source)) continue;
    if (chart.edges.some((e) => topOf(e.source) === node.id && topOf(e.target) === source))
      rank.set(node.id, rank.get(source)!);
  }
  // States no transition reaches go in a last column.
  const last = Math.max(0, ...rank.values()) + 1;
  for (const node of top) if (!rank.has(node.id)) rank.set(node.id, last);
  return rank;
}

/** Size of a node box: compound states hold their children in a row. */
function nodeSize(node: ChartNode, measure: Measure): { w: number; h: number } {
  const own = Math.max(NODE_W, Math.ceil(measure(node)) + NAME_PAD * 2);
  if (node.children.length === 0) return { w: own, h: NODE_H };
  const inner = node.children.map((child) => nodeSize(child, measure));
  return {
    w: Math.max(
      own,
      inner.reduce((sum, b) => sum + b.w + 10, 10),
    ),
    h: 30 + Math.max(...inner.map((b) => b.h)) + 10,
  };
}

/**
 * Draws the statechart in `svg`: top-level states in columns by distance from the initial state,
 * sub-states inside their parent, one arrow per source and target with its events as the label.
 */
export function drawChart(svg: SVGSVGElement, chart: ChartDefinition): ChartView {
  svg.replaceChildren();
  // Boxes are as wide as their widest text (the name, or the actors it invokes).
  const measure: Measure = (node) =>
    Math.max(
      textWidth(svg, node.key, 'state-name'),
      node.invoke.length ? textWidth(svg, invokeText(node), 'state-invoke') : 0,
    );
  const sizeOf = (node: ChartNode) => nodeSize(node, measure);
  const top = chart.root.children;
  const all = new Map<string, ChartNode>();
  const parentTop = new Map<string, string>();
  const index = (node: ChartNode, topId: string) => {
    all.set(node.id, node);
    parentTop.set(node.id, topId);
    for (const child of node.children) index(child, topId);
  };
  for (const node of top) index(node, node.id);
  const topOf = (id: string) => parentTop.get(id);

  const ranks = rankNodes(chart, top, topOf);
  const columns: ChartNode[][] = [];
  for (const node of top) {
    const r = ranks.get(node.id) ?? 0;
    const column = columns[r] ?? [];
    column.push(node);
    columns[r] = column;
  }
  columns.forEach((col, r) => {
    if (col) columns[r] = orderColumn(col, chart.edges, topOf);
  });
  const boxes = new Map<string, Box>();
  const colHeights = columns.map((col) =>
    (col ?? []).reduce((sum, n) => sum + sizeOf(n).h + ROW_GAP, -ROW_GAP),
  );
  const height = Math.max(...colHeights, NODE_H) + PAD * 2;
  let x = PAD;
  columns.forEach((col, r) => {
    if (!col) return;
    const widest = Math.max(...col.map((n) => sizeOf(n).w));
    let y = PAD + (height - PAD * 2 - colHeights[r]!) / 2;
    for (const node of col) {
      const size = sizeOf(node);
      boxes.set(node.id, { node, x: x + (widest - size.w) / 2, y, w: size.w, h: size.h, rank: r });
      y += size.h + ROW_GAP;
    }
    x += widest + COL_GAP;
  });

  // One arrowhead for edges, one for the edges the session took (styled apart in style.css).
  const arrowhead = (id: string, className: string) =>
    s(
      'marker',
      {
        id,
        viewBox: '0 0 10 10',
        refX: 9,
        refY: 5,
        markerWidth: 7,
        markerHeight: 7,
        orient: 'auto-start-reverse',
      },
      s('path', { d: 'M0,0 L10,5 L0,10 z', class: className }),
    );
  svg.append(s('defs', {}, arrowhead('arrow', 'arrowhead'), arrowhead('arrow-taken', 'arrowhead taken')));

  // Edges between top-level boxes (a transition into or out of a sub-state is drawn to its box).
  const grouped = new Map<string, { from: string; to: string; edges: ChartEdge[] }>();
  for (const edge of chart.edges) {
    const from = topOf(edge.source) ?? edge.source;
    const to = topOf(edge.target) ?? edge.target;
    const key = `${from}->${to}`;
    const group = grouped.get(key) ?? { from, to, edges: [] };
    group.edges.push(edge);
    grouped.set(key, group);
  }
  const edgeLayer = s('g', { class: 'edges' });
  const labelLayer = s('g', { class: 'labels' });
  const edgeEls = new Map<string, SVGGElement>();
  for (const [key, group] of grouped) {
    const a = boxes.get(group.from);
    const b = boxes.get(group.to);
    if (!a || !b) continue;
    const labels = [
      ...new Set(
        group.edges.map((e) => (e.guard && e.guard !== 'guard' ? `${e.label} [${e.guard}]` : e.label)),
      ),
    ];
    const { d, lx, ly, side } = route(a, b, grouped.has(`${group.to}->${group.from}`), boxes);
    const g = s(
      'g',
      { class: 'edge', 'data-from': group.from, 'data-to': group.to },
      s('title', {}, `${a.node.key} → ${b.node.key}: ${labels.join(', ')}`),
      s('path', { d, 'marker-end': 'url(#arrow)' }),
    );
    edgeLayer.append(g);
    edgeEls.set(key, g);
    const text = s('text', {
      x: lx,
      y: ly,
      class: `edge-label${side ? ' side' : ''}${side === 'end' ? ' end' : ''}`,
      'data-edge': key,
    });
    labels.forEach((label, i) => {
      text.append(s('tspan', { x: lx, dy: i === 0 ? `${-(labels.length - 1) * 0.55}em` : '1.1em' }, label));
    });
    labelLayer.append(text);
  }
  svg.append(edgeLayer);

  const nodeEls = new Map<string, SVGGElement>();
  const rects: Rect[] = [];
  const drawNode = (
    node: ChartNode,
    bx: number,
    by: number,
    w: number,
    h: number,
    depth: number,
  ): SVGGElement => {
    const g = s('g', { class: `state depth-${depth}`, 'data-id': node.id, 'data-key': node.key });
    g.append(s('title', {}, describe(node)));
    g.append(s('rect', { x: bx, y: by, width: w, height: h, rx: 10 }));
    rects.push({ x: bx, y: by, w, h });
    const compound = node.children.length > 0;
    g.append(
      s(
        'text',
        {
          x: bx + w / 2,
          y: compound ? by + 18 : by + h / 2 - (node.invoke.length ? 4 : -4),
          class: 'state-name',
        },
        node.key,
      ),
    );
    if (node.invoke.length > 0 && !compound) {
      g.append(s('text', { x: bx + w / 2, y: by + h / 2 + 12, class: 'state-invoke' }, invokeText(node)));
    }
    if (chart.root.initial === node.id) {
      g.append(s('circle', { cx: bx - 14, cy: by + h / 2, r: 5, class: 'initial-dot' }));
      g.append(
        s('path', {
          d: `M${bx - 9},${by + h / 2} L${bx - 1},${by + h / 2}`,
          class: 'initial-line',
          'marker-end': 'url(#arrow)',
        }),
      );
    }
    nodeEls.set(node.id, g);
    let cx = bx + 10;
    for (const child of node.children) {
      const size = sizeOf(child);
      g.append(drawNode(child, cx, by + 28, size.w, size.h, depth + 1));
      cx += size.w + 10;
    }
    return g;
  };
  const nodeLayer = s('g', { class: 'nodes' });
  for (const box of boxes.values()) nodeLayer.append(drawNode(box.node, box.x, box.y, box.w, box.h, 0));
  svg.append(nodeLayer, labelLayer);
  // Labels off the boxes and off each other; the view box holds all of it, labels that moved too.
  const labelRects = placeLabels(Array.from(labelLayer.querySelectorAll('text')), rects);
  fitViewBox(svg, [...rects, ...labelRects], 10);

  return {
    update(active, path) {
      const visited = new Set(path);
      const taken = new Set<string>();
      for (let i = 1; i < path.length; i++) {
        const from = topOf(path[i - 1]!) ?? path[i - 1]!;
        const to = topOf(path[i]!) ?? path[i]!;
        taken.add(`${from}->${to}`);
      }
      for (const [id, el] of nodeEls) {
        el.classList.toggle('active', active.has(id));
        el.classList.toggle('visited', visited.has(id) && !active.has(id));
      }
      for (const [key, el] of edgeEls) {
        const on = taken.has(key);
        el.classList.toggle('taken', on);
        el.querySelector('path')?.setAttribute('marker-end', on ? 'url(#arrow-taken)' : 'url(#arrow)');
        svg.querySelector(`text[data-edge="${CSS.escape(key)}"]`)?.classList.toggle('taken', on);
      }
    },
  };
}

function invokeText(node: ChartNode): string {
  return `invoke ${node.invoke.join(', ')}`;
}

function describe(node: ChartNode): string {
  const lines = [node.id];
  if (node.invoke.length) lines.push(`invokes: ${node.invoke.join(', ')}`);
  if (node.internal.length) lines.push(`handles: ${node.internal.join(', ')}`);
  if (node.description) lines.push(node.description);
  return lines.join('\n');
}

/**
 * Orders one column so that transitions between its states point down where they can: a
 * topological order of the in-column edges, ties broken by definition order.
 */
function orderColumn(
  col: ChartNode[],
  edges: readonly ChartEdge[],
  topOf: (id: string) => string | undefined,
): ChartNode[] {
  const ids = new Set(col.map((n) => n.id));
  const incoming = new Map(col.map((n) => [n.id, new Set<string>()]));
  for (const e of edges) {
    const from = topOf(e.source);
    const to = topOf(e.target);
    if (from && to && from !== to && ids.has(from) && ids.has(to)) incoming.get(to)!.add(from);
  }
  const out: ChartNode[] = [];
  const left = [...col];
  while (left.length > 0) {
    const placed = new Set(out.map((n) => n.id));
    // The first state all of whose in-column sources are placed; on a cycle, the first one left.
    const next = left.find((n) => [...incoming.get(n.id)!].every((src) => placed.has(src))) ?? left[0]!;
    out.push(next);
    left.splice(left.indexOf(next), 1);
  }
  return out;
}

type Point = [number, number];

function bezierAt(p0: Point, p1: Point, p2: Point, p3: Point, t: number): Point {
  const u = 1 - t;
  const f = (i: 0 | 1) =>
    u * u * u * p0[i] + 3 * u * u * t * p1[i] + 3 * u * t * t * p2[i] + t * t * t * p3[i];
  return [f(0), f(1)];
}

function curve(p0: Point, p1: Point, p2: Point, p3: Point, labelAt: number) {
  const [lx, ly] = bezierAt(p0, p1, p2, p3, labelAt);
  return { d: `M${p0[0]},${p0[1]} C${p1[0]},${p1[1]} ${p2[0]},${p2[1]} ${p3[0]},${p3[1]}`, lx, ly: ly + 3 };
}

/** An arrow from box `a` to box `b`, and where its label goes. */
function route(
  a: Box,
  b: Box,
  hasReverse: boolean,
  boxes: ReadonlyMap<string, Box>,
): { d: string; lx: number; ly: number; side?: 'start' | 'end' } {
  const shift = hasReverse ? 7 : 0;
  if (a === b) {
    // A self-transition: a loop over the top edge.
    const x1 = a.x + a.w * 0.35;
    const x2 = a.x + a.w * 0.65;
    return curve([x1, a.y], [x1 - 10, a.y - 34], [x2 + 10, a.y - 34], [x2, a.y], 0.5);
  }
  if (b.rank > a.rank) {
    const p0: Point = [a.x + a.w, a.y + a.h / 2 - shift];
    const p3: Point = [b.x, b.y + b.h / 2 - shift];
    const dx = (p3[0] - p0[0]) / 2;
    return curve(p0, [p0[0] + dx, p0[1]], [p3[0] - dx, p3[1]], p3, 0.5);
  }
  if (b.rank < a.rank) {
    // Backwards: leave from the left side, label near the source so labels of several back edges spread out.
    const p0: Point = [a.x, a.y + a.h / 2 + shift];
    const p3: Point = [b.x + b.w, b.y + b.h / 2 + shift];
    const dx = (p0[0] - p3[0]) / 2;
    return curve(p0, [p0[0] - dx, p0[1]], [p3[0] + dx, p3[1]], p3, 0.22);
  }
  // Same column: adjacent states get a straight arrow; others an arc on the right that clears the boxes between.
  const column = [...boxes.values()].filter((x) => x.rank === a.rank).sort((p, q) => p.y - q.y);
  const span = Math.abs(column.indexOf(a) - column.indexOf(b));
  const down = b.y > a.y;
  if (span <= 1) {
    const x = a.x + a.w * (down ? 0.5 : 0.3);
    const y1 = down ? a.y + a.h : a.y;
    const y2 = down ? b.y : b.y + b.h;
    // An arrow up has its label on its left: a pair of arrows between two boxes keeps them apart.
    const side = down ? 'start' : 'end';
    return { d: `M${x},${y1} L${x},${y2}`, lx: down ? x + 5 : x - 5, ly: (y1 + y2) / 2 + 3, side };
  }
  const right = Math.max(a.x + a.w, b.x + b.w);
  const bulge = 18 + 16 * span;
  const p0: Point = [right, a.y + a.h / 2 + (down ? 6 : -6)];
  const p3: Point = [right, b.y + b.h / 2 + (down ? -6 : 6)];
  const c = curve(p0, [right + bulge, p0[1]], [right + bulge, p3[1]], p3, 0.5);
  return { ...c, lx: c.lx + 4, side: 'start' };
}
