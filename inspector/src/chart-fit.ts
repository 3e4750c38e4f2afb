// Fitting the statechart's text: boxes sized to their names, edge labels moved off boxes and off
// each other, and a view box that holds everything drawn (nothing clipped at the edges).

/** A rectangle in the chart's user units. */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Columns of room around an edge label that other things keep clear of. */
const LABEL_MARGIN = 2;
/** How far a label may be moved from where its edge puts it, in steps tried nearest first. */
const SHIFTS = (() => {
  const out: [number, number][] = [];
  for (let step = 0; step <= 12; step++) {
    for (const dy of step === 0 ? [0] : [step * 6, -step * 6]) {
      for (const dx of [0, 24, -24, 48, -48]) out.push([dx, dy]);
    }
  }
  return out.sort((a, b) => Math.hypot(a[0] / 2, a[1]) - Math.hypot(b[0] / 2, b[1]));
})();

/**
 * The width `text` takes in `svg` with `className`'s style, measured by drawing it; an estimate when
 * nothing is laid out (a hidden page).
 */
export function textWidth(svg: SVGSVGElement, text: string, className: string): number {
  const probe = document.createElementNS('http://www.w3.org/2000/svg', 'text');
  probe.setAttribute('class', className);
  probe.textContent = text;
  svg.append(probe);
  const width = probe.getComputedTextLength();
  probe.remove();
  return width > 0 ? width : text.length * 8;
}

function overlap(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

function grow(r: Rect, by: number): Rect {
  return { x: r.x - by, y: r.y - by, w: r.w + by * 2, h: r.h + by * 2 };
}

/**
 * Moves each label (with a `translate`) to the nearest place where it covers no box and no label
 * placed before it; where there is none, to the place it covers least. Returns where they went.
 */
export function placeLabels(labels: readonly SVGTextElement[], boxes: readonly Rect[]): Rect[] {
  const taken: Rect[] = [...boxes];
  const placed: Rect[] = [];
  for (const label of labels) {
    // Measured at its widest: a label of an edge the session took is drawn bold (class `taken`).
    const bold = label.classList.contains('taken');
    label.classList.add('taken');
    const box = label.getBBox();
    if (!bold) label.classList.remove('taken');
    const at = { x: box.x, y: box.y, w: box.width, h: box.height };
    let best: { rect: Rect; cost: number; dx: number; dy: number } | undefined;
    for (const [dx, dy] of SHIFTS) {
      const rect = { ...at, x: at.x + dx, y: at.y + dy };
      const padded = grow(rect, LABEL_MARGIN);
      const cost = taken.reduce((sum, t) => sum + overlap(padded, t), 0);
      if (!best || cost < best.cost) best = { rect, cost, dx, dy };
      if (cost === 0) break;
    }
    if (!best) continue;
    if (best.dx !== 0 || best.dy !== 0) label.setAttribute('transform', `translate(${best.dx} ${best.dy})`);
    taken.push(best.rect);
    placed.push(best.rect);
  }
  return placed;
}

/** Sets the view box (and natural size) to hold `rects` and every path drawn, with `pad` around. */
export function fitViewBox(svg: SVGSVGElement, rects: readonly Rect[], pad: number): void {
  const all = [...rects];
  for (const path of Array.from(svg.querySelectorAll<SVGGraphicsElement>('.edge path, .initial-dot'))) {
    const b = path.getBBox();
    all.push({ x: b.x, y: b.y, w: b.width, h: b.height });
  }
  const x0 = Math.min(...all.map((r) => r.x)) - pad;
  const y0 = Math.min(...all.map((r) => r.y)) - pad;
  const x1 = Math.max(...all.map((r) => r.x + r.w)) + pad;
  const y1 = Math.max(...all.map((r) => r.y + r.h)) + pad;
  const width = Math.ceil(x1 - x0);
  const height = Math.ceil(y1 - y0);
  svg.setAttribute('viewBox', `${Math.floor(x0)} ${Math.floor(y0)} ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
}
