// What telemetry costs per model call: the benchmark task (11 model calls a session, bench/lib/task.mjs)
// run by agentloop in ONE process (same heap, same JIT), interleaved round by round, as:
//   base   the code before telemetry existed (a dist/ built from the fork point, BASE_DIST), if given
//   off    this dist/ without the `telemetry` option
//   hooks  this dist/ with an empty hooks object (every hook absent: the agent's own bookkeeping)
//   otel   this dist/ with otelTelemetry() over the OpenTelemetry SDK (every span sampled and ended,
//          handed to a SimpleSpanProcessor whose exporter does nothing)
// The scripted server runs in its own child process (bench/lib/server.mjs), so its CPU never counts.
//
//   npm run build && node bench/telemetry.mjs [--sessions=100] [--rounds=8] [--stream=false]
//   BASE_DIST=/tmp/base/dist node bench/telemetry.mjs    (the "off costs nothing" comparison)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { flagArgs } from './lib/flags.mjs';
import { OpenAI, z } from './lib/root-deps.mjs';
import { lookup, MODEL, SYSTEM_PROMPT, TOOL_DESCRIPTION, TOOL_NAME, USER_PROMPT } from './lib/task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const SESSIONS = Number(args.sessions ?? 100);
const ROUNDS = Number(args.rounds ?? 8);
const STREAM = args.stream === 'true';

const server = spawn(process.execPath, [path.join(here, 'lib/server.mjs')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const urls = await new Promise((resolve) => {
  let buffer = '';
  server.stdout.on('data', (d) => {
    buffer += d;
    if (buffer.includes('\n')) resolve(JSON.parse(buffer.slice(0, buffer.indexOf('\n'))));
  });
});

/** An exporter that drops every span (the cost measured is making and ending them). */
const dropAll = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropAll)] });

/** One harness: a fresh agent per session from `dist`, with `extra` options. */
async function harness(dist, extra) {
  const { createAgent, defineTool } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const client = new OpenAI({ baseURL: urls.task, apiKey: 'bench', maxRetries: 0 });
  const tool = defineTool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ key: z.string() }),
    execute: lookup,
  });
  const options = {
    client,
    model: MODEL,
    instructions: SYSTEM_PROMPT,
    tools: [tool],
    stream: STREAM,
    loopControlTools: false,
    planning: false,
    contextWindow: false,
    ...extra,
  };
  return async () => {
    const agent = createAgent(options);
    const result = await agent.send(USER_PROMPT);
    agent.stop();
    if (!result.success) throw new Error(`session failed: ${result.error ?? result.terminateReason}`);
    return result.iterations;
  };
}

const dist = path.join(here, '..', 'dist');
const { otelTelemetry } = await import(pathToFileURL(path.join(dist, 'otel', 'index.js')).href);
const variants = {};
if (process.env.BASE_DIST) variants.base = await harness(path.resolve(process.env.BASE_DIST), {});
variants.off = await harness(dist, {});
variants.hooks = await harness(dist, { telemetry: {} });
variants.otel = await harness(dist, { telemetry: otelTelemetry({ tracer: provider.getTracer('bench') }) });
const names = Object.keys(variants);

for (const name of names) for (let i = 0; i < 20; i++) await variants[name](); // warm-up
const wall = Object.fromEntries(names.map((n) => [n, []]));
const cpu = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of round % 2 ? names : [...names].reverse()) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let calls = 0;
    for (let i = 0; i < SESSIONS; i++) calls += await variants[name]();
    const c = process.cpuUsage(c0);
    wall[name].push((performance.now() - t0) / calls);
    cpu[name].push((c.user + c.system) / 1000 / calls);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ref = names.includes('base') ? 'base' : 'off';
console.log(
  `${STREAM ? 'streaming' : 'non-streaming'}, ${SESSIONS} sessions x ${ROUNDS} rounds, ms per model call (medians):`,
);
for (const name of names) {
  const w = median(wall[name]);
  const c = median(cpu[name]);
  console.log(
    `${name.padEnd(6)} wall ${w.toFixed(4)}  cpu ${c.toFixed(4)}  wall ${(w / median(wall[ref])).toFixed(3)}x ${ref}` +
      `  cpu ${(c / median(cpu[ref])).toFixed(3)}x ${ref}`,
  );
}
const perCall = median(wall.otel) - median(wall.off);
console.log(`otel over off: +${(perCall * 1000).toFixed(1)} µs wall per model call`);
server.stdin.end();
