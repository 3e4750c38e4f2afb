// AG-UI server figures (issue 34), from dist/:
//   npm run build && node --expose-gc bench/ag-ui.mjs [--rounds=7] [--streams=500] [--calls=250]
// 1. per event: the same streamed turn run in process (events counted on the agent's bus) and through
//    the server (SSE read by a fetch client in the same process); the server's added cost per SSE
//    event is (wall through SSE - wall on the bus) / SSE events. Rounds interleaved, medians.
// 2. `--streams` concurrent runs, each resting in a tool with its SSE stream open, in a child server
//    process: its RSS growth per stream, next to the RSS growth per idle agent (created, one turn run,
//    resting) in another child with the same store kind. Both after GC.
// 3. reconnect replay: a turn of `--calls` parallel tool calls (4 durable events each, about 1,000 in
//    all) on the file store, then GET …/events from the start until the run's end, `--rounds` times.
// Child modes: `node bench/ag-ui.mjs --child=streams|idle --n=500`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { OpenAI, z } from './lib/root-deps.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dist = path.resolve(args.dist ?? path.join(here, '..', 'dist'));
const m = await import(`${dist}/index.js`);
const server = await import(`${dist}/server/index.js`);
const testing = await import(`${dist}/testing/index.js`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gc = () => {
  for (let i = 0; i < 3; i++) globalThis.gc?.();
};
/** CPU milliseconds (user + system) of this process since `since`. */
const cpuMs = (since) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};
const tempDir = (prefix) => mkdtempSync(path.join(tmpdir(), prefix));

/** Reads an SSE response to its end; the number of events and the time the last one came. */
async function readSse(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let events = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let i = buffer.indexOf('\n\n');
    while (i >= 0) {
      if (buffer.slice(0, i).includes('data:')) events++;
      buffer = buffer.slice(i + 2);
      i = buffer.indexOf('\n\n');
    }
  }
  return events;
}

const noop = () =>
  m.defineTool({
    name: 'noop',
    description: 'nothing',
    parameters: z.object({ i: z.number() }),
    execute: () => 'ok',
  });

/** A turn that streams `chars` characters of text and makes `calls` parallel calls, then answers. */
function streamedTurn(calls, chars) {
  return {
    turns: [
      {
        content: 'x'.repeat(chars),
        toolCalls: Array.from({ length: calls }, (_, i) => ({ name: 'noop', arguments: { i } })),
      },
      { content: 'y'.repeat(chars) },
    ],
  };
}

async function sameRun(rounds, calls) {
  const model = await testing.startScriptedServer({ scenario: streamedTurn(calls, 400) });
  const dir = tempDir('agui-bench-');
  const store = new m.FileSessionStore({ dir });
  const options = () => ({
    instructions: 'You help.',
    loopControlTools: false,
    tools: [noop()],
    stream: true,
  });
  const started = await server.startAgentServer({
    agent: options,
    store,
    runtime: { baseURL: model.url, apiKey: 'k' },
  });
  const client = new OpenAI({ baseURL: model.url, apiKey: 'k', maxRetries: 0 });
  const bus = [];
  const sse = [];
  const busCpus = [];
  const sseCpus = [];
  let busEvents = 0;
  let sseEvents = 0;
  for (let r = 0; r < rounds + 1; r++) {
    // On the bus: the same agent options, the same store, in process.
    const agent = m.createAgent({ ...options(), client, store, session: `bus-${r}` });
    let n = 0;
    agent.on('*', () => void n++);
    let t = performance.now();
    let cpu = process.cpuUsage();
    await agent.send('go');
    const busMs = performance.now() - t;
    const busCpu = cpuMs(cpu);
    await agent.close();
    // Through the server.
    t = performance.now();
    cpu = process.cpuUsage();
    const res = await fetch(`${started.url}/agents/default/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        threadId: `sse-${r}`,
        runId: 'r',
        messages: [{ id: 'u', role: 'user', content: 'go' }],
      }),
    });
    const events = await readSse(res);
    const sseMs = performance.now() - t;
    const sseCpu = cpuMs(cpu);
    if (r === 0) continue; // warm-up
    bus.push(busMs);
    sse.push(sseMs);
    busCpus.push(busCpu);
    sseCpus.push(sseCpu);
    busEvents = n;
    sseEvents = events;
  }
  await started.close();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
  const busMs = median(bus);
  const sseMs = median(sse);
  return {
    calls,
    busEvents,
    sseEvents,
    busMs: Math.round(busMs * 10) / 10,
    sseMs: Math.round(sseMs * 10) / 10,
    busCpuMs: Math.round(median(busCpus) * 10) / 10,
    sseCpuMs: Math.round(median(sseCpus) * 10) / 10,
    busEventsPerSec: Math.round((busEvents / busMs) * 1000),
    sseEventsPerSec: Math.round((sseEvents / sseMs) * 1000),
  };
}

/**
 * The same turn at two sizes, in process and through the server: what a run costs once (opening the
 * thread, its start and end entries) cancels out, and the server's cost per SSE event is
 * ((sse big - sse small) - (bus big - bus small)) / (SSE events big - SSE events small).
 */
async function perEvent(rounds) {
  const small = await sameRun(rounds, 10);
  const big = await sameRun(rounds, 400);
  const events = big.sseEvents - small.sseEvents;
  const added = big.sseMs - small.sseMs - (big.busMs - small.busMs);
  const addedCpu = big.sseCpuMs - small.sseCpuMs - (big.busCpuMs - small.busCpuMs);
  return {
    small,
    big,
    addedUsPerSseEvent: Math.round((added / events) * 1000 * 10) / 10,
    addedCpuUsPerSseEvent: Math.round((addedCpu / events) * 1000 * 10) / 10,
    rounds,
  };
}

async function replay(rounds, calls) {
  const model = await testing.startScriptedServer({
    scenario: {
      turns: [
        { toolCalls: Array.from({ length: calls }, (_, i) => ({ name: 'noop', arguments: { i } })) },
        { content: 'done' },
      ],
    },
  });
  const dir = tempDir('agui-bench-');
  const started = await server.startAgentServer({
    agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [noop()] }),
    store: new m.FileSessionStore({ dir }),
    runtime: { baseURL: model.url, apiKey: 'k' },
  });
  const res = await fetch(`${started.url}/agents/default/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      threadId: 'long',
      runId: 'r',
      messages: [{ id: 'u', role: 'user', content: 'go' }],
    }),
  });
  const live = await readSse(res);
  const times = [];
  let events = 0;
  for (let r = 0; r < rounds + 1; r++) {
    const t = performance.now();
    const again = await fetch(`${started.url}/agents/default/threads/long/events`, {
      headers: { 'last-event-id': '0' },
    });
    events = await readSse(again);
    if (r > 0) times.push(performance.now() - t);
  }
  await started.close();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    liveEvents: live,
    replayedEvents: events,
    replayMs: Math.round(median(times) * 10) / 10,
    minMs: Math.round(Math.min(...times) * 10) / 10,
    rounds,
  };
}

/** Runs a child mode and returns its last JSON line (it prints `{ ready: url }` first for `streams`). */
function child(mode, n, onReady) {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--expose-gc', fileURLToPath(import.meta.url), `--child=${mode}`, `--n=${n}`],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    let buffer = '';
    let last;
    proc.stdout.on('data', (d) => {
      buffer += d;
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        const line = JSON.parse(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
        last = line;
        if (line.ready) void onReady?.(line, proc);
      }
    });
    proc.on('exit', (code) =>
      code === 0 ? resolve(last) : reject(new Error(`child ${mode} exited ${code}`)),
    );
  });
}

async function concurrentStreams(n) {
  const idle = await child('idle', n);
  const streams = await child('streams', n, async ({ ready }, proc) => {
    const runs = Array.from({ length: n }, (_, i) =>
      fetch(`${ready}/agents/default/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({
          threadId: `s-${i}`,
          runId: 'r',
          messages: [{ id: 'u', role: 'user', content: 'go' }],
        }),
      }).then(readSse),
    );
    const counts = await Promise.all(runs);
    proc.stdin.end(JSON.stringify({ ended: counts.filter((c) => c > 0).length }));
  });
  return {
    streams: n,
    idleAgentKiB: Math.round(idle.perKiB),
    streamKiB: Math.round(streams.perKiB),
    ratio: Math.round((streams.perKiB / idle.perKiB) * 100) / 100,
    streamHeapKiB: Math.round(streams.heapPerKiB),
    idleHeapKiB: Math.round(idle.heapPerKiB),
  };
}

// ---- children ----
async function childIdle(n) {
  const model = await testing.startScriptedServer({ scenario: { turns: [{ content: 'hi' }] } });
  const dir = tempDir('agui-bench-');
  const store = new m.FileSessionStore({ dir });
  const client = new OpenAI({ baseURL: model.url, apiKey: 'k', maxRetries: 0 });
  const make = async (id) => {
    const agent = m.createAgent({
      instructions: 'You help.',
      loopControlTools: false,
      client,
      store,
      session: id,
    });
    await agent.send('go');
    return agent;
  };
  await (await make('warm')).close();
  gc();
  const before = process.memoryUsage();
  const agents = [];
  for (let i = 0; i < n; i++) agents.push(await make(`idle-${i}`));
  gc();
  const after = process.memoryUsage();
  console.log(
    JSON.stringify({
      perKiB: (after.rss - before.rss) / n / 1024,
      heapPerKiB: (after.heapUsed - before.heapUsed) / n / 1024,
    }),
  );
  await Promise.all(agents.map((a) => a.close()));
  await model.close();
  rmSync(dir, { recursive: true, force: true });
}

async function childStreams(n) {
  const model = await testing.startScriptedServer({
    scenario: { turns: [{ toolCalls: [{ name: 'wait', arguments: {} }] }, { content: 'done' }] },
  });
  const dir = tempDir('agui-bench-');
  let waiting = 0;
  let wanted = 1;
  const deferred = () => {
    let resolve;
    const promise = new Promise((r) => (resolve = r));
    return { promise, resolve };
  };
  let gate = deferred();
  let allIn = deferred();
  const wait = m.defineTool({
    name: 'wait',
    description: 'waits',
    parameters: z.object({}),
    execute: async () => {
      const mine = gate;
      if (++waiting === wanted) allIn.resolve();
      await mine.promise;
      return 'ok';
    },
  });
  const started = await server.startAgentServer({
    agent: () => ({ instructions: 'You help.', loopControlTools: false, tools: [wait] }),
    store: new m.FileSessionStore({ dir }),
    runtime: { baseURL: model.url, apiKey: 'k' },
    leaseMs: 600_000,
  });
  // One run first, so that what loads once is loaded before the baseline.
  const warm = await fetch(`${started.url}/agents/default/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      threadId: 'warm',
      runId: 'r',
      messages: [{ id: 'u', role: 'user', content: 'go' }],
    }),
  });
  const warmRead = readSse(warm);
  await allIn.promise;
  gate.resolve();
  await warmRead;
  // The measured runs: n of them, each resting in its tool with its stream open.
  waiting = 0;
  wanted = n;
  gate = deferred();
  allIn = deferred();
  gc();
  const before = process.memoryUsage();
  console.log(JSON.stringify({ ready: started.url }));
  await allIn.promise;
  gc();
  const after = process.memoryUsage();
  const line = {
    perKiB: (after.rss - before.rss) / n / 1024,
    heapPerKiB: (after.heapUsed - before.heapUsed) / n / 1024,
  };
  gate.resolve();
  await new Promise((resolve) => process.stdin.on('data', resolve));
  await started.close();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify(line));
}

if (args.child === 'idle') await childIdle(Number(args.n));
else if (args.child === 'streams') await childStreams(Number(args.n));
else {
  const rounds = Number(args.rounds ?? 7);
  const result = {
    perEvent: await perEvent(rounds),
    replay: await replay(rounds, Number(args.calls ?? 250)),
    concurrent: await concurrentStreams(Number(args.streams ?? 500)),
  };
  console.log(JSON.stringify(result, null, 2));
}
