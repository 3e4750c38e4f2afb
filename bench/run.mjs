// npm run bench: builds agentloop (package.json does), starts the scripted server in its own child
// process, runs every figure with each harness in its own child process, interleaved (A B A B ...),
// and writes bench/results/latest.json and the results table in bench/README.md.
//
//   node bench/run.mjs [--rounds=N] [--only=serial,concurrent,paced,idle,requests,startup,arguments]
//                      [--harnesses=handwritten,agentloop,xstate-floor,...] [--sessions=N]
//                      [--concurrent-sessions=N] [--no-readme] [--out=file.json]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { summary } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const ROUNDS = Number(args.rounds ?? 5);
const only = args.only ? new Set(args.only.split(',')) : null;
const wants = (figure) => !only || only.has(figure);
const started = Date.now();

/**
 * Harnesses: the hand-written loop (the floor), agentloop and the XState floor (the design's
 * statechart shape with no features; serial and concurrent figures only) always; peers when their
 * packages are installed in bench/.
 */
const PEERS = [
  { name: 'openai-agents', packages: ['@openai/agents'] },
  { name: 'vercel-ai', packages: ['ai', '@ai-sdk/openai'] },
  { name: 'langgraph', packages: ['@langchain/langgraph', '@langchain/openai'] },
];
const notes = [];
let harnesses = ['handwritten', 'agentloop', 'xstate-floor'];
for (const peer of PEERS) {
  const missing = peer.packages.filter(
    (p) => !existsSync(path.join(here, 'node_modules', p, 'package.json')),
  );
  if (!existsSync(path.join(here, 'harness', `${peer.name}.mjs`))) continue;
  if (missing.length > 0) {
    notes.push(
      `${peer.name}: skipped (${missing.join(', ')} not installed; run \`npm --prefix bench install\`)`,
    );
    continue;
  }
  harnesses.push(peer.name);
}
/** Harnesses run only when `--harnesses` names them (serial and concurrent figures). */
const OPT_IN = ['xstate-service', 'xstate-turn'];
if (args.harnesses) {
  const named = args.harnesses.split(',');
  harnesses = [...harnesses, ...OPT_IN].filter((h) => named.includes(h));
}
const BASE = 'handwritten';

function log(line) {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
}

/** Runs a node child and parses the one JSON line it prints. */
function child(script, argv, { timeoutMs = 180_000 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--expose-gc', path.join(here, script), ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0)
        return reject(
          new Error(
            `${script} ${argv.slice(0, 2).join(' ')} exited ${code}: ${err.trim().split('\n').slice(-6).join('\n')}`,
          ),
        );
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()));
      } catch {
        reject(new Error(`${script}: bad output ${out.slice(0, 200)} ${err.slice(0, 500)}`));
      }
    });
  });
}

async function startServer() {
  const proc = spawn(process.execPath, [path.join(here, 'lib/server.mjs')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_LATENCY_MS: '50' },
  });
  const urls = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      if (buf.includes('\n')) resolve(JSON.parse(buf.split('\n')[0]));
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { urls, stop: () => proc.stdin.end() };
}

const CORE = new Set(['handwritten', 'agentloop']);
const FLOOR = 'xstate-floor';

/**
 * Interleaved rounds: for r in rounds, for h in harnesses: one child. Failures are recorded per harness.
 * `peers` and `floor` adjust the run for the peer harnesses and the XState floor (`false`: not run;
 * `{ rounds, ...params }`: fewer rounds or sessions, so that `npm run bench` stays under 10 minutes
 * with every peer installed).
 */
async function interleaved(label, figure, params, { peers = {}, floor = false } = {}) {
  const adjust = (h) => (CORE.has(h) ? {} : h === FLOOR || OPT_IN.includes(h) ? floor : peers);
  const list = harnesses.filter((h) => adjust(h) !== false);
  const runs = Object.fromEntries(list.map((h) => [h, []]));
  const errors = {};
  for (let r = 0; r < params.rounds; r++) {
    for (const h of list) {
      if (errors[h]) continue;
      const own = { ...params, ...adjust(h) };
      if (r >= (own.rounds ?? params.rounds)) continue;
      try {
        runs[h].push(await child('worker.mjs', [figure, h, JSON.stringify(own)]));
      } catch (error) {
        errors[h] = error.message;
        log(`${label} ${h}: FAILED ${error.message}`);
      }
    }
    log(`${label}: round ${r + 1}/${params.rounds}`);
  }
  return { runs, errors };
}

function summarize(runs, keys) {
  const out = {};
  for (const [h, list] of Object.entries(runs)) {
    if (list.length === 0) continue;
    out[h] = {};
    for (const k of keys) out[h][k] = summary(list.map((x) => x[k]));
  }
  // Ratios to the hand-written loop: the median of the per-round ratios is noisier to read; we give
  // the ratio of medians, and min-max over the rounds' paired ratios.
  if (out[BASE]) {
    for (const [h, s] of Object.entries(out)) {
      s.ratio = {};
      for (const k of keys) {
        const paired = runs[h].map((x, i) => (runs[BASE][i] ? x[k] / runs[BASE][i][k] : Number.NaN));
        s.ratio[k] = { ofMedians: s[k].median / out[BASE][k].median, paired: summary(paired) };
      }
    }
  }
  return out;
}

const results = {
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  date: new Date().toISOString(),
  machine: {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpu: os.cpus()[0]?.model,
    node: process.version,
    loadavgAtStart: os.loadavg().map((x) => +x.toFixed(2)),
    platform: `${os.type()} ${os.release()}`,
  },
  harnesses,
  notes,
  figures: {},
};

const server = await startServer();
log(`server ${JSON.stringify(server.urls)}; harnesses: ${harnesses.join(', ')}`);
for (const note of notes) log(note);
try {
  if (wants('serial')) {
    for (const stream of [false, true]) {
      const label = `serial ${stream ? 'stream' : 'non-stream'}`;
      const { runs, errors } = await interleaved(
        label,
        'serial',
        {
          url: server.urls.task,
          stream,
          warmup: 20,
          sessions: Number(args.sessions ?? 100),
          rounds: ROUNDS,
        },
        { peers: { sessions: 30, warmup: 5 }, floor: {} },
      );
      results.figures[`serial_${stream ? 'stream' : 'nonstream'}`] = {
        what: 'one session after another, 0 ms server latency; per model call',
        summary: summarize(runs, ['wallPerCallMs', 'cpuPerCallMs']),
        errors,
        runs,
      };
    }
  }
  if (wants('concurrent')) {
    const sessions = Number(args['concurrent-sessions'] ?? 1000);
    const rounds = Math.max(2, Math.ceil(ROUNDS / 2));
    for (const stream of [true, false]) {
      const label = `concurrent ${stream ? 'stream' : 'non-stream'}`;
      const { runs, errors } = await interleaved(
        label,
        'concurrent',
        { url: server.urls.slow, stream, warmup: 20, sessions, rounds },
        // The XState floor one round fewer (a run takes 10-15 s), peers once and streaming only.
        { peers: stream ? { rounds: 1 } : false, floor: { rounds: Math.max(1, rounds - 1) } },
      );
      results.figures[`concurrent_${stream ? 'stream' : 'nonstream'}`] = {
        what: `${sessions.toLocaleString('en')} sessions at once, 50 ms server latency per call (11 calls each)`,
        sessions,
        summary: summarize(runs, ['wallMs', 'cpuMs', 'peakRssKiB', 'rssPerSessionKiB']),
        errors,
        runs,
      };
    }
  }
  if (wants('paced')) {
    const { runs, errors } = await interleaved(
      'paced',
      'paced',
      {
        url: server.urls.paced,
        warmup: 3,
        sessions: 20,
        rounds: Math.max(2, Math.ceil(ROUNDS / 2)),
      },
      { peers: { rounds: 1, sessions: 10 } },
    );
    results.figures.paced = {
      what: 'one streamed message with 3 tool calls, 4 ms between chunks: tool start minus receipt of the chunk completing its arguments',
      summary: summarize(runs, ['lagMedianMs', 'lagP95Ms', 'lagMaxMs', 'startedBeforeStreamEnd', 'calls']),
      errors,
      runs,
    };
  }
  if (wants('idle')) {
    const { runs, errors } = await interleaved(
      'idle',
      'idle',
      {
        url: server.urls.task,
        sessions: 10_000,
        rounds: Math.max(2, Math.ceil(ROUNDS / 2)),
      },
      { peers: false },
    );
    results.figures.idle = {
      what: '10,000 idle sessions in one process (agentloop: agents created and started, resting in AwaitingInput)',
      summary: summarize(runs, ['heapPerSessionKiB', 'rssPerSessionKiB', 'createMsPerSession', 'rssKiB']),
      errors,
      runs,
    };
  }
  if (wants('requests')) {
    const runs = [];
    for (let r = 0; r < 3; r++)
      runs.push(await child('micro.mjs', ['requests', JSON.stringify({ messages: 1000, steps: 30 })]));
    log('requests: done');
    results.figures.requests = { what: 'request building with 1,000 messages (agentloop only)', runs };
  }
  if (wants('startup')) {
    const projectRoot = mkdtempSync(path.join(os.tmpdir(), 'agentloop-bench-'));
    const runs = [];
    for (let r = 0; r < 3; r++)
      runs.push(
        await child('micro.mjs', [
          'startup',
          JSON.stringify({ repeats: 20, validateRepeats: 5, projectRoot }),
        ]),
      );
    log('startup: done');
    results.figures.startup = { what: 'bundle agent start-up and validate (agentloop only)', runs };
  }
  if (wants('arguments')) {
    const runs = [];
    for (let r = 0; r < 3; r++)
      runs.push(await child('micro.mjs', ['arguments', JSON.stringify({ kib: 106, repeats: 3 })]));
    log('arguments: done');
    results.figures.arguments = {
      what: '106 KiB of tool-call arguments streamed in 8-character fragments, each ending in "}" (agentloop only)',
      runs,
    };
  }
} finally {
  server.stop();
}
results.machine.loadavgAtEnd = os.loadavg().map((x) => +x.toFixed(2));
results.durationSec = Math.round((Date.now() - started) / 1000);

mkdirSync(path.join(here, 'results'), { recursive: true });
const outFile = args.out ?? path.join(here, 'results', 'latest.json');
writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
const { renderMarkdown } = await import('./lib/report.mjs');
const markdown = renderMarkdown(results);
writeFileSync(outFile.replace(/\.json$/, '.md'), markdown);
if (args['no-readme'] !== 'true' && !args.out) {
  const readme = path.join(here, 'README.md');
  const text = readFileSync(readme, 'utf8');
  const start = '<!-- results:start -->';
  const end = '<!-- results:end -->';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i >= 0 && j > i)
    writeFileSync(readme, `${text.slice(0, i + start.length)}\n${markdown}\n${text.slice(j)}`);
}
process.stdout.write(markdown);
log(`done in ${results.durationSec} s; wrote ${path.relative(process.cwd(), outFile)}`);
