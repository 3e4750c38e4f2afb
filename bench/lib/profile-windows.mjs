// Issue 36 (dbos36c): a V8 CPU profile's samples that fall in labelled windows of time, by label:
// self time by function, and the share of the window's wall time sampled at all (the rest the process
// was idle, waiting). Windows from bench/dbos-turn-timeline.mjs `--probe-windows=<file>`.
// node --cpu-prof --cpu-prof-interval=100 bench/dbos-turn-timeline.mjs --probe --probe-windows=/tmp/w.json ...
// node bench/lib/profile-windows.mjs <.cpuprofile> /tmp/w.json [top=12] [label filter]
import { readFileSync } from 'node:fs';

const [file, windowsFile, top = '12', filter = ''] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const windows = JSON.parse(readFileSync(windowsFile, 'utf8')).sort((a, b) => a[1] - b[1]);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const name = (id) => {
  const cf = byId.get(id).callFrame;
  const where = cf.url ? cf.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/') : '';
  return `${cf.functionName || '(anon)'} ${where}${where ? `:${cf.lineNumber + 1}` : ''}`;
};
// Sample times: startTime plus the running sum of the deltas (us, the monotonic clock).
const labels = new Map();
let t = profile.startTime;
let w = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  t += dt;
  while (w < windows.length && windows[w][2] < t) w++;
  // Windows may overlap (a batch's steps): every window holding the sample gets it.
  for (let k = w; k < windows.length && windows[k][1] <= t; k++) {
    if (windows[k][2] < t) continue;
    const label = windows[k][0];
    if (!labels.has(label)) labels.set(label, { us: 0, fns: new Map() });
    const entry = labels.get(label);
    entry.us += dt;
    const fn = name(profile.samples[i]);
    entry.fns.set(fn, (entry.fns.get(fn) ?? 0) + dt);
  }
}
const wall = new Map();
for (const [label, a, b] of windows) wall.set(label, (wall.get(label) ?? 0) + b - a);
for (const [label, entry] of [...labels].sort()) {
  if (filter && !label.includes(filter)) continue;
  const idle = entry.fns.get('(idle) ') ?? 0;
  console.log(
    `${label}: wall ${(wall.get(label) / 1000).toFixed(1)} ms, sampled ${(entry.us / 1000).toFixed(1)} ms, of it idle ${(idle / 1000).toFixed(1)}`,
  );
  for (const [fn, us] of [...entry.fns].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
    console.log(`  ${(us / 1000).toFixed(2).padStart(8)} ms  ${fn}`);
}
