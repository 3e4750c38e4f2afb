// Summarises a V8 .cpuprofile: self time by function and by file (node bench/lib/profile-summary.mjs FILE [N]).
import { readFileSync } from 'node:fs';

const [file, top = '40'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fn = new Map();
const files = new Map();
for (const [id, us] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const where = cf.url ? cf.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/') : '(native)';
  const key = `${cf.functionName || '(anon)'} ${where}:${cf.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + us);
  const fkey = where.startsWith('node_modules/')
    ? where
        .split('/')
        .slice(0, where.split('/')[1].startsWith('@') ? 3 : 2)
        .join('/')
    : where.startsWith('node:')
      ? where
      : where;
  files.set(fkey, (files.get(fkey) ?? 0) + us);
}
const show = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([k, us]) =>
        `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`,
    )
    .join('\n');
console.log(
  `total sampled ${(total / 1000).toFixed(0)} ms\n-- by file --\n${show(files, 25)}\n-- by function --\n${show(fn, Number(top))}`,
);
