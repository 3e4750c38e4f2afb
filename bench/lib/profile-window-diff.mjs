// wake36: where two modes' sessions spend their main-thread time, from one V8 CPU profile whose
// sessions were labelled by time windows (bench/step-wait-cpu.mjs `--profile=a,b --windows=<file>`):
// per session, the time sampled in each file and function of mode `a` and of mode `b`, and the
// difference, largest first. Time is the number of samples (not idle) times the profile's mean interval:
// V8 samples the thread by a signal that waits while the thread is off its CPU (pending signals merge
// into one), so a count follows the thread's CPU time more than the samples' own deltas (wall time)
// do; but on a loaded machine the sampling thread is late too, so read the two modes against each
// other (one profile, sessions interleaved), not as CPU ms (bench/step-wait-cpu.mjs reads those).
// node bench/lib/profile-window-diff.mjs <.cpuprofile> <windows.json> <mode a> <mode b> [top=25]
import { readFileSync } from 'node:fs';

const [file, windowsFile, a, b, top = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const windows = JSON.parse(readFileSync(windowsFile, 'utf8')).sort((x, y) => x[1] - y[1]);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const intervalUs = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
const where = (cf) => {
  if (!cf.url) return '(native)';
  const u = cf.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/');
  if (u.startsWith('node_modules/')) {
    const parts = u.split('/');
    return parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/');
  }
  return u;
};
const fnName = (cf) => `${cf.functionName || '(anon)'} ${where(cf)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
/** Per mode: sessions, samples by file, by function. */
const modes = new Map();
for (const label of [a, b]) modes.set(label, { sessions: 0, total: 0, files: new Map(), fns: new Map() });
for (const [label] of windows) if (modes.has(label)) modes.get(label).sessions++;
let t = profile.startTime;
let w = 0;
const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  while (w < windows.length && windows[w][2] < t) w++;
  const win = windows[w];
  if (!win || win[1] > t || !modes.has(win[0])) continue;
  const cf = byId.get(profile.samples[i]).callFrame;
  if (cf.functionName === '(idle)') continue;
  const m = modes.get(win[0]);
  m.total++;
  add(m.files, cf.functionName.startsWith('(') ? cf.functionName : where(cf));
  add(m.fns, fnName(cf));
}
const ms = (label, n) => (n * intervalUs) / 1000 / modes.get(label).sessions;
const diff = (key) => {
  const keys = new Set([...modes.get(a)[key].keys(), ...modes.get(b)[key].keys()]);
  return [...keys]
    .map((k) => [k, ms(a, modes.get(a)[key].get(k) ?? 0), ms(b, modes.get(b)[key].get(k) ?? 0)])
    .map(([k, x, y]) => [k, x, y, y - x]);
};
const show = (rows, n) =>
  rows
    .sort((x, y) => Math.abs(y[3]) - Math.abs(x[3]))
    .slice(0, n)
    .map(
      ([k, x, y, d]) =>
        `${x.toFixed(3).padStart(8)} ${y.toFixed(3).padStart(8)} ${(d >= 0 ? '+' : '') + d.toFixed(3).padStart(7)} ${x > 0 ? `${((100 * d) / x).toFixed(0).padStart(5)}%` : '     -'}  ${k}`,
    )
    .join('\n');
const ta = ms(a, modes.get(a).total);
const tb = ms(b, modes.get(b).total);
console.log(
  `interval ${intervalUs.toFixed(0)} us; ms a session sampled (not idle): ${a} ${ta.toFixed(2)} (${modes.get(a).sessions} sessions), ${b} ${tb.toFixed(2)} (${modes.get(b).sessions}), ${b} - ${a} ${(tb - ta).toFixed(2)}`,
);
console.log(`-- by file (ms a session: ${a}, ${b}, difference) --\n${show(diff('files'), 30)}`);
console.log(`-- by function --\n${show(diff('fns'), Number(top))}`);
const sum = (rows) => rows.reduce((s, r) => s + r[3], 0);
const files = diff('files');
const net = sum(files);
const dearer = files.filter((r) => r[3] > 0).length;
const top5 = sum(files.sort((x, y) => y[3] - x[3]).slice(0, 5));
console.log(
  `difference spread: ${dearer} of ${files.length} files dearer${net > 0 ? `; the 5 largest hold ${((100 * top5) / net).toFixed(0)}% of the net difference` : ''}`,
);
