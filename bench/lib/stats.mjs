/** Median, min and max of a list of numbers. */
export function summary(values) {
  const sorted = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Mean of a list with its spread: `sd` (sample standard deviation) and `se` (standard error of the
 * mean, sd / sqrt(n)). A bench whose samples are rounded up to a poll interval reads differences by
 * the mean, whose error shrinks with n, where the median moves by whole intervals.
 */
export function meanSpread(values) {
  const xs = values.filter((v) => Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return { mean: Number.NaN, sd: Number.NaN, se: Number.NaN, n };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd, se: sd / Math.sqrt(n), n };
}

/**
 * A shuffler seeded by `seed` (mulberry32 numbers, Fisher-Yates): each call returns a shuffled copy of
 * `items`, the same sequence of orders for the same seed, so that a run's orders can be run again.
 */
export function seededShuffle(seed) {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (items) => {
    const out = [...items];
    for (let k = out.length - 1; k > 0; k--) {
      const j = Math.floor(random() * (k + 1));
      [out[k], out[j]] = [out[j], out[k]];
    }
    return out;
  };
}
