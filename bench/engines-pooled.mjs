// bench/engines.mjs run again and again, each run in a fresh process, its parts pooled across the runs
// (issue 36). One run's standard error counts only the spread between its sessions; what one process
// makes of its code (which functions V8 inlines, where its code and objects lie, what ran before) moves
// a mode's sessions all together, and two runs of the same build read a part a few ms apart. Here each
// run is one sample: the pooled part is the mean of the runs' parts, with the standard error of those
// means, which counts both spreads.
// npm run build && node bench/engines-pooled.mjs [--runs=6] [--first-seed=11] -- <bench/engines.mjs arguments>
//   e.g. node bench/engines-pooled.mjs --runs=8 -- --sessions=40 --repeat=3 --interleave --warmup=10
//          --only=in-process,hand,restate,restate-hand
// Prints each run's parts (ms of a session, and its share of the session's time) and the pooled ones.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const split = process.argv.indexOf('--');
const own = split === -1 ? process.argv.slice(2) : process.argv.slice(2, split);
const passed = split === -1 ? [] : process.argv.slice(split + 1);
const option = (name, fallback) => {
  const found = own.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
};
const runs = option('runs', 6);
const firstSeed = option('first-seed', 11);
if (!Number.isInteger(runs) || runs < 2) throw new Error('--runs must be an integer of at least 2');
if (passed.some((a) => a.startsWith('--seed=')))
  throw new Error('the runs take their seeds from --first-seed');

const engines = fileURLToPath(new URL('./engines.mjs', import.meta.url));

/** Runs bench/engines.mjs once and resolves with its last line's JSON (its `meanParts`). */
function runOnce(seed) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [engines, ...passed, `--seed=${seed}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trimEnd().split('\n').at(-1) ?? '';
      if (code !== 0) return reject(new Error(`bench/engines.mjs --seed=${seed} exited ${code}`));
      try {
        resolve(JSON.parse(last).meanParts);
      } catch {
        reject(
          new Error(`bench/engines.mjs --seed=${seed} ended without its JSON line: ${last.slice(0, 200)}`),
        );
      }
    });
  });
}

const round = (x) => Math.round(x * 100) / 100;
/** Mean and standard error of the mean. */
function meanSe(xs) {
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1);
  return { mean, se: Math.sqrt(variance / xs.length) };
}

/** Per part and shape, each run's `{ ms, share, se }`. */
const pooled = {};
for (let k = 0; k < runs; k++) {
  const seed = firstSeed + k;
  const started = Date.now();
  const parts = await runOnce(seed);
  for (const [part, shapes] of Object.entries(parts)) {
    for (const [shape, value] of Object.entries(shapes)) {
      pooled[part] ??= {};
      pooled[part][shape] ??= [];
      pooled[part][shape].push(value);
    }
  }
  console.log(`run ${k + 1}/${runs} (--seed=${seed}) in ${Math.round((Date.now() - started) / 1000)} s`);
}

console.log(
  `\nparts pooled over ${runs} runs (ms of a session, share of the session's time; +- s.e. across runs):`,
);
for (const [part, shapes] of Object.entries(pooled)) {
  console.log(`  ${part}`);
  for (const [shape, values] of Object.entries(shapes)) {
    if (values.length < 2) continue;
    const ms = meanSe(values.map((v) => v.ms));
    const share = meanSe(values.map((v) => v.share));
    // The runs' own standard errors, pooled: what one run's spread says the pooled mean's should be.
    const within = Math.sqrt(values.reduce((a, v) => a + (v.se ?? 0) ** 2, 0)) / values.length;
    console.log(
      `    ${shape.padEnd(6)} ${round(ms.mean)} +- ${round(ms.se)} ms, ${round(share.mean)}% +- ${round(share.se)}% ` +
        `(runs: ${values.map((v) => `${v.share}%`).join(' ')}; within runs +- ${round(within)} ms)`,
    );
  }
}
console.log(JSON.stringify({ runs, firstSeed, args: passed, pooled }));
