// Bytes allocated per model call, by function and by file: sampled with V8's heap profiler, the
// objects that minor and major collections freed kept in the profile, so the figure is what a call
// allocates, not what it leaves behind. Deterministic enough to compare builds on a loaded machine
// (allocation does not depend on the load; the wall does).
//   npm run build && node --expose-gc bench/alloc-per-call.mjs <harness> [--stream] [--sessions=200]
//     [--concurrent] [--top=25] [--interval=512] [--json]
// Starts bench/lib/server.mjs as its own child (closed on exit). Serial by default against the
// 0 ms server; --concurrent runs the sessions at once against the 50 ms server, as the bench's
// concurrent figure does.
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CALLS_PER_SESSION } from './lib/task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    stream: { type: 'boolean', default: false },
    concurrent: { type: 'boolean', default: false },
    sessions: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    top: { type: 'string', default: '25' },
    interval: { type: 'string', default: '512' },
    json: { type: 'boolean', default: false },
  },
});
const harnessName = positionals[0] ?? 'agentloop';
const sessions = Number(values.sessions);

const server = spawn(process.execPath, [path.join(here, 'lib/server.mjs')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const urls = await new Promise((resolve, reject) => {
  let text = '';
  server.stdout.on('data', (d) => {
    text += d;
    const nl = text.indexOf('\n');
    if (nl >= 0) resolve(JSON.parse(text.slice(0, nl)));
  });
  server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
});
const stopServer = () => {
  server.stdin.end();
};

try {
  const { createHarness } = await import(`./harness/${harnessName}.mjs`);
  const harness = await createHarness({
    baseURL: values.concurrent ? urls.slow : urls.task,
    stream: values.stream,
  });
  const run = async (n) => {
    if (values.concurrent) {
      const counts = await Promise.all(Array.from({ length: n }, () => harness.runSession()));
      return counts.reduce((a, b) => a + b, 0);
    }
    let calls = 0;
    for (let i = 0; i < n; i++) calls += await harness.runSession();
    return calls;
  };
  await run(Number(values.warmup));
  globalThis.gc?.();

  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(values.interval),
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const calls = await run(sessions);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  if (process.env.ALLOC_PROFILE_OUT)
    (await import('node:fs')).writeFileSync(process.env.ALLOC_PROFILE_OUT, JSON.stringify(profile));
  if (calls !== sessions * CALLS_PER_SESSION)
    throw new Error(`expected ${sessions * CALLS_PER_SESSION} calls, made ${calls}`);

  const byFunction = new Map();
  const byFile = new Map();
  let total = 0;
  // A native frame's allocation (a Map, a Set, an array's growth) is counted to the JavaScript
  // function that called it: that is the code that chose to allocate.
  const walk = (node, parent) => {
    const size = node.selfSize;
    const native = !node.callFrame.url && parent;
    if (size > 0) {
      total += size;
      const f = native ? parent.callFrame : node.callFrame;
      const file = f.url
        ? f.url
            .replace(/^file:\/\//, '')
            .replace(/^.*\/node_modules\//, 'node_modules/')
            .replace(/^.*\/(dist|bench)\//, '$1/')
        : '(native)';
      const key = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + size);
      byFile.set(file, (byFile.get(file) ?? 0) + size);
    }
    for (const c of node.children) walk(c, native ? parent : node);
  };
  walk(profile.head, undefined);
  if (values.json) {
    const perCall = (m) => Object.fromEntries([...m].map(([k, v]) => [k, v / calls / 1024]));
    process.stdout.write(
      `${JSON.stringify({ harness: harnessName, calls, kibPerCall: total / calls / 1024, byFile: perCall(byFile), byFunction: perCall(byFunction) })}\n`,
    );
    stopServer();
    process.exit(0);
  }
  const kib = (b) => (b / calls / 1024).toFixed(2);
  const mode = `${values.concurrent ? 'concurrent' : 'serial'}, ${values.stream ? 'streaming' : 'non-streaming'}`;
  console.log(
    `${harnessName} (${mode}): ${calls} calls, ${kib(total)} KiB allocated per call (sampled, interval ${values.interval} B)`,
  );
  const top = Number(values.top);
  console.log('\nby file (KiB per call):');
  for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${kib(v).padStart(8)}  ${k}`);
  console.log('\nby function (KiB per call):');
  for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${kib(v).padStart(8)}  ${k}`);
} finally {
  stopServer();
}
process.exit(0);
