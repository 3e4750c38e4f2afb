// Child process: runs one measurement of one harness and prints one JSON line.
//   node --expose-gc bench/worker.mjs <figure> <harness> '<json params>'
// figure: serial | concurrent | paced | idle
import { createProbeFetch } from './lib/probe-fetch.mjs';
import { percentile } from './lib/stats.mjs';
import { CALLS_PER_SESSION, PACED_CALLS } from './lib/task.mjs';

const [figure, harnessName, rawParams] = process.argv.slice(2);
const params = JSON.parse(rawParams ?? '{}');
const { createHarness } = await import(`./harness/${harnessName}.mjs`);
const gc = () => {
  if (globalThis.gc) {
    globalThis.gc();
    globalThis.gc();
  }
};
const cpuMs = (usage) => (usage.user + usage.system) / 1000;

async function serial() {
  const harness = await createHarness({ baseURL: params.url, stream: params.stream });
  for (let i = 0; i < params.warmup; i++) await harness.runSession();
  gc();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let calls = 0;
  for (let i = 0; i < params.sessions; i++) calls += await harness.runSession();
  const wall = performance.now() - t0;
  const cpu = cpuMs(process.cpuUsage(cpu0));
  if (calls !== params.sessions * CALLS_PER_SESSION)
    throw new Error(`expected ${params.sessions * CALLS_PER_SESSION} calls, made ${calls}`);
  return { calls, wallPerCallMs: wall / calls, cpuPerCallMs: cpu / calls };
}

async function concurrent() {
  const harness = await createHarness({ baseURL: params.url, stream: params.stream });
  // Warm up (module loading, JIT, the connection pool's first sockets) outside the measurement.
  await Promise.all(Array.from({ length: params.warmup }, () => harness.runSession()));
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const baseRss = process.memoryUsage.rss();
  let peakRss = baseRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 5);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const counts = await Promise.all(Array.from({ length: params.sessions }, () => harness.runSession()));
  const wall = performance.now() - t0;
  const cpu = cpuMs(process.cpuUsage(cpu0));
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  const calls = counts.reduce((a, b) => a + b, 0);
  if (calls !== params.sessions * CALLS_PER_SESSION)
    throw new Error(`expected ${params.sessions * CALLS_PER_SESSION} calls, made ${calls}`);
  return {
    sessions: params.sessions,
    wallMs: wall,
    cpuMs: cpu,
    baseRssKiB: baseRss / 1024,
    peakRssKiB: peakRss / 1024,
    rssPerSessionKiB: (peakRss - baseRss) / 1024 / params.sessions,
  };
}

async function paced() {
  const probe = createProbeFetch();
  let starts = new Map();
  let delivered = new Map();
  const harness = await createHarness({
    baseURL: params.url,
    stream: true,
    fetch: probe.fetch,
    onToolStart: (id, t) => {
      if (!starts.has(id)) starts.set(id, t);
    },
    onArgsDelivered: (index, t) => {
      if (!delivered.has(index)) delivered.set(index, t);
    },
  });
  const lags = [];
  const sdkLags = [];
  let beforeEnd = 0;
  let total = 0;
  for (let i = 0; i < params.warmup + params.sessions; i++) {
    probe.marks.reset();
    starts = new Map();
    delivered = new Map();
    await harness.runSession();
    if (i < params.warmup) continue;
    // The scripted server gives call i the id `call_0_i` (turn 0).
    for (let c = 0; c < PACED_CALLS; c++) {
      const start = starts.get(`call_0_${c}`);
      const complete = probe.marks.argsComplete.get(c);
      if (start === undefined || complete === undefined) throw new Error(`paced: no mark for call ${c}`);
      lags.push(start - complete);
      if (process.env.BENCH_DEBUG_PACED)
        process.stderr.write(`session ${i} call ${c} lag ${(start - complete).toFixed(3)}\n`);
      if (delivered.has(c)) sdkLags.push(delivered.get(c) - complete);
      total++;
      if (start < probe.marks.streamEnd) beforeEnd++;
    }
  }
  return {
    calls: total,
    lagMedianMs: percentile(lags, 50),
    lagP95Ms: percentile(lags, 95),
    lagMaxMs: Math.max(...lags),
    startedBeforeStreamEnd: beforeEnd,
    // Hand-written loop only: receipt of the bytes to the SDK yielding the chunk (the SDK's own part).
    ...(sdkLags.length
      ? { sdkDeliveryMedianMs: percentile(sdkLags, 50), sdkDeliveryMaxMs: Math.max(...sdkLags) }
      : {}),
  };
}

async function idle() {
  const harness = await createHarness({ baseURL: params.url, stream: true });
  const warm = [];
  for (let i = 0; i < 100; i++) warm.push(await harness.createIdle());
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const base = process.memoryUsage();
  const sessions = [];
  const t0 = performance.now();
  for (let i = 0; i < params.sessions; i++) sessions.push(harness.createIdle());
  const ready = await Promise.all(sessions);
  const createMs = performance.now() - t0;
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const after = process.memoryUsage();
  const n = ready.length;
  const result = {
    sessions: n,
    createMsPerSession: createMs / n,
    heapPerSessionKiB: (after.heapUsed - base.heapUsed) / 1024 / n,
    rssPerSessionKiB: (after.rss - base.rss) / 1024 / n,
    rssKiB: after.rss / 1024,
  };
  if (ready.length !== params.sessions || warm.length !== 100) throw new Error('lost sessions');
  return result;
}

const figures = { serial, concurrent, paced, idle };
const run = figures[figure];
if (!run) throw new Error(`unknown figure ${figure}`);
const result = await run();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
