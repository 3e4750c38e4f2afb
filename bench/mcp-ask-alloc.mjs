// Bytes allocated a call (V8's sampling heap profiler, collected objects kept in the profile): `direct`
// (agent.send() on a new agent and session) against `handler` (the MCP server's tools/call handler of
// ask_bench, called as the SDK's Protocol calls it, no transport) and `lane` (the same call answered by
// withAskLane below the Protocol, as `agentloop mcp serve` answers it over stdio, on a transport that
// only hands messages over; when the build has the lane), in one process, and the functions whose
// allocation differs most from `direct` (`--against=lane` compares the lane's). Allocation does not
// depend on the machine's load: it compares builds where the wall cannot (bench/README.md, "mcpfast35",
// "mcpask").
//   npm run build && node --expose-gc bench/mcp-ask-alloc.mjs [--dist=<a dist folder>] [--turns=400] [--top=40] [--against=handler|lane]
import { randomUUID } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { serveScriptedModel, spawnScriptedModel, textTurnOptions } from './lib/scripted-model-child.mjs';
import { FINAL_ANSWER } from './lib/task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dist = args.dist ? path.resolve(args.dist) : path.join(here, '..', 'dist');
const QUESTION = 'Summarise the ten documents in one sentence.';
if (args.role === 'model') {
  await serveScriptedModel();
} else {
  const N = Number(args.turns ?? 300);
  const { createAgent, MemorySessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const { createMcpServer, withAskLane } = await import(
    pathToFileURL(path.join(dist, 'server', 'mcp', 'index.js')).href
  );
  const model = await spawnScriptedModel(fileURLToPath(import.meta.url));
  const options = textTurnOptions(model.baseURL);
  const store = new MemorySessionStore();
  const direct = async () => {
    const a = createAgent({ ...options, store, session: randomUUID() });
    const r = await a.send(QUESTION);
    await a.close();
    if (!r.success) throw new Error('x');
  };
  const srv = createMcpServer({ name: 'bench', agent: () => options, store: new MemorySessionStore() });
  const callHandler = srv.server._requestHandlers.get('tools/call');
  let id = 0;
  const handler = async () => {
    const request = {
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: 'ask_bench', arguments: { message: QUESTION } },
    };
    const r = await callHandler(request, {
      signal: new AbortController().signal,
      requestId: request.id,
      sendNotification: async () => {},
      sendRequest: async () => {
        throw new Error('no');
      },
    });
    if (r.structuredContent?.response !== FINAL_ANSWER) throw new Error(JSON.stringify(r));
  };
  const variants = { direct, handler };
  if (withAskLane) {
    // A transport that hands messages over in process: the lane's answer resolves the call waiting on its id.
    const waiting = new Map();
    const inner = {
      start: async () => {},
      close: async () => {},
      send: async (message) => {
        waiting.get(message.id)?.(message);
        waiting.delete(message.id);
      },
    };
    const laneServer = createMcpServer({
      name: 'bench',
      agent: () => options,
      store: new MemorySessionStore(),
    });
    await laneServer.connect(withAskLane(laneServer, inner));
    variants.lane = async () => {
      const request = {
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'ask_bench', arguments: { message: QUESTION } },
      };
      const answered = new Promise((resolve) => waiting.set(request.id, resolve));
      inner.onmessage(request);
      const r = (await answered).result;
      if (r?.structuredContent?.response !== FINAL_ANSWER) throw new Error(JSON.stringify(r));
    };
  }
  for (const run of Object.values(variants)) for (let i = 0; i < 50; i++) await run();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  const out = {};
  for (const [name, run] of Object.entries(variants)) {
    globalThis.gc?.();
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    for (let i = 0; i < N; i++) await run();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    const byFn = new Map();
    let total = 0;
    const walk = (node, parent) => {
      const native = !node.callFrame.url && parent;
      if (node.selfSize > 0) {
        total += node.selfSize;
        const f = native ? parent.callFrame : node.callFrame;
        const file = f.url
          ? f.url
              .replace(/^file:\/\//, '')
              .replace(/^.*\/node_modules\//, 'nm/')
              .replace(/^.*\/(dist|bench)\//, '$1/')
          : '(native)';
        const k = `${f.functionName || '(anon)'} ${file}:${f.lineNumber + 1}`;
        byFn.set(k, (byFn.get(k) ?? 0) + node.selfSize);
      }
      for (const c of node.children) walk(c, native ? parent : node);
    };
    walk(profile.head);
    out[name] = { total: total / N, byFn };
  }
  console.log(
    Object.fromEntries(Object.entries(out).map(([k, v]) => [k, `${(v.total / 1024).toFixed(1)} KiB`])),
  );
  const against = out[args.against ?? 'handler'];
  const keys = new Set([...out.direct.byFn.keys(), ...against.byFn.keys()]);
  const diff = [...keys]
    .map((k) => [k, ((against.byFn.get(k) ?? 0) - (out.direct.byFn.get(k) ?? 0)) / N])
    .sort((a, b) => b[1] - a[1]);
  for (const [k, v] of diff.slice(0, Number(args.top ?? 40)))
    console.log((v / 1024).toFixed(2).padStart(8), k);
  console.log('...');
  for (const [k, v] of diff.slice(-8)) console.log((v / 1024).toFixed(2).padStart(8), k);
  model.stop();
  process.exit(0);
}
