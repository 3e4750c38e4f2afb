import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { mcpSdk } from './lib/root-deps.mjs';
import { serveScriptedModel, spawnScriptedModel, textTurnOptions } from './lib/scripted-model-child.mjs';
import { FINAL_ANSWER } from './lib/task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const args = flagArgs();
const QUESTION = 'Summarise the ten documents in one sentence.';

if (args.role === 'model') {
  await serveScriptedModel();
} else {
  await main();
}

async function main() {
  const TURNS = Number(args.turns ?? 200);
  const ROUNDS = Number(args.rounds ?? 7);
  const WARMUP = Number(args.warmup ?? 50);
  const { createAgent, MemorySessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const { createMcpServer } = await import(pathToFileURL(path.join(dist, 'server', 'mcp', 'index.js')).href);
  const { runAsk } = await import(pathToFileURL(path.join(dist, 'server', 'mcp', 'ask-turn.js')).href);
  const { RunningSessions } = await import(
    pathToFileURL(path.join(dist, 'server', 'mcp', 'running-sessions.js')).href
  );
  const { Client } = await import(mcpSdk('client/index.js'));
  const { InMemoryTransport } = await import(mcpSdk('inMemory.js'));
  const types = await import(mcpSdk('types.js'));

  const model = await spawnScriptedModel(fileURLToPath(import.meta.url));
  const baseURL = model.baseURL;
  const options = textTurnOptions(baseURL);
  const check = (structured, what) => {
    if (structured?.response !== FINAL_ANSWER) throw new Error(`${what} turn failed`);
  };

  const store = new MemorySessionStore();
  const direct = async () => {
    const agent = createAgent({ ...options, store, session: randomUUID() });
    const result = await agent.send(QUESTION);
    await agent.close();
    if (!result.success) throw new Error('direct turn failed');
  };

  const target = {
    name: 'bench',
    toolName: 'ask_bench',
    source: () => options,
    store: new MemorySessionStore(),
    runtime: {},
    allow: new Set(),
    maxMessageChars: 200_000,
    approvalTimeoutMs: 600_000,
    running: new RunningSessions(),
  };
  const never = new AbortController().signal;
  const ask = async () => {
    const result = await runAsk(target, { message: QUESTION }, { principal: 'local', signal: never });
    check(result.structuredContent, 'runAsk');
  };

  // The server's tools/call handler, called as Protocol#_onrequest calls it (its private map).
  const handlerServer = createMcpServer({
    name: 'bench',
    agent: () => options,
    store: new MemorySessionStore(),
  });
  const callHandler = handlerServer.server._requestHandlers.get('tools/call');
  let id = 0;
  const callRequest = () => ({
    jsonrpc: '2.0',
    id: ++id,
    method: 'tools/call',
    params: { name: 'ask_bench', arguments: { message: QUESTION } },
  });
  const extraFor = (request) => {
    const abort = new AbortController();
    return {
      signal: abort.signal,
      _meta: request.params?._meta,
      requestId: request.id,
      sendNotification: async () => {},
      sendRequest: async () => {
        throw new Error('no requests in this bench');
      },
    };
  };
  const handler = async () => {
    const request = callRequest();
    const result = await callHandler(request, extraFor(request));
    check(result.structuredContent, 'handler');
  };

  // The same handler with the stdio transports' per-message work of both sides around it.
  let lastResponseLine = '';
  let lastRequestLine = '';
  const { JSONRPCMessageSchema } = types;
  const stdioJson = async () => {
    const requestLine = JSON.stringify(callRequest()); // client: serializeMessage
    const request = JSONRPCMessageSchema.parse(JSON.parse(requestLine)); // server: deserializeMessage
    const result = await callHandler(request, extraFor(request));
    const responseLine = JSON.stringify({ result, jsonrpc: '2.0', id: request.id }); // server: serializeMessage
    const response = JSONRPCMessageSchema.parse(JSON.parse(responseLine)); // client: deserializeMessage
    check(response.result.structuredContent, 'stdio-json');
    lastRequestLine = requestLine;
    lastResponseLine = responseLine;
  };

  const inMemoryServer = createMcpServer({
    name: 'bench',
    agent: () => options,
    store: new MemorySessionStore(),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await inMemoryServer.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientSide);
  const inmemory = async () => {
    const result = await client.callTool({ name: 'ask_bench', arguments: { message: QUESTION } });
    check(result.structuredContent, 'inmemory');
  };

  const variants = { direct, runAsk: ask, handler, 'stdio-json': stdioJson, inmemory };
  const cpu = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const wall = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  // The main thread's CPU (µs): V8's compiler and GC threads, whose work swings by a millisecond a
  // turn between rounds, left out. Linux's schedstat; elsewhere the whole process's.
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const ownCpu = existsSync(schedstat)
    ? () => Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1e3
    : () => {
        const { user, system } = process.cpuUsage();
        return user + system;
      };
  for (const run of Object.values(variants)) for (let i = 0; i < WARMUP; i++) await run();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(variants)) {
      const cpu0 = ownCpu();
      const start = process.hrtime.bigint();
      for (let i = 0; i < TURNS; i++) await run();
      const end = process.hrtime.bigint();
      wall[name].push(Number(end - start) / 1e3 / TURNS);
      // BENCH_MARKS=1: each round's CLOCK_MONOTONIC window on stderr (to cut a `perf record -k mono` to it).
      if (process.env.BENCH_MARKS) process.stderr.write(`mark ${name} ${start} ${end}\n`);
      cpu[name].push((ownCpu() - cpu0) / TURNS);
    }
  }
  await client.close();
  await inMemoryServer.close();
  model.stop();

  // Each SDK check of one call on its real messages, µs a call (median of 15 batches of 200).
  const response = JSON.parse(lastResponseLine);
  const request = JSON.parse(lastRequestLine);
  const { normalizeObjectSchema } = await import(mcpSdk('server/zod-compat.js'));
  const { askOutputSchema } = await import(pathToFileURL(path.join(dist, 'server', 'mcp', 'index.js')).href);
  const z4 = await import('../node_modules/zod/v4-mini/index.js');
  const askInput = { message: QUESTION };
  const inputSchema = normalizeObjectSchema(handlerServer._registeredTools.ask_bench.inputSchema);
  const pieces = {
    'JSON.parse + JSONRPCMessageSchema.parse, request line': () =>
      JSONRPCMessageSchema.parse(JSON.parse(lastRequestLine)),
    'JSON.parse + JSONRPCMessageSchema.parse, response line': () =>
      JSONRPCMessageSchema.parse(JSON.parse(lastResponseLine)),
    'JSON.stringify, response': () => JSON.stringify(response),
    'message type guards, request (3 safeParse)': () =>
      types.isJSONRPCResultResponse(request) ||
      types.isJSONRPCErrorResponse(request) ||
      types.isJSONRPCRequest(request),
    'message type guards, response (1 safeParse)': () => types.isJSONRPCResultResponse(response),
    'CallToolRequestSchema.parse': () => types.CallToolRequestSchema.parse(request),
    'CallToolResultSchema.safeParse': () => types.CallToolResultSchema.safeParse(response.result),
    'input check, safeParseAsync': () => z4.safeParseAsync(inputSchema, askInput),
    'output check, safeParseAsync': () =>
      z4.safeParseAsync(askOutputSchema, response.result.structuredContent),
    'output check, safeParse': () => z4.safeParse(askOutputSchema, response.result.structuredContent),
  };
  const pieceUs = {};
  for (const [name, fn] of Object.entries(pieces)) {
    for (let i = 0; i < 500; i++) await fn();
    const batches = [];
    for (let b = 0; b < 15; b++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < 200; i++) await fn();
      batches.push(Number(process.hrtime.bigint() - start) / 1e3 / 200);
    }
    pieceUs[name] = median(batches);
  }

  const us = (x) => x.toFixed(0);
  const lines = [
    `MCP server layers: ${TURNS} turns a round, ${ROUNDS} rounds, ${WARMUP} warm-up turns a variant; node ${process.version}`,
    '| variant | CPU µs per turn (median) | min-max | over direct | wall µs per turn (median) |',
    '|---|---|---|---|---|',
  ];
  const base = median(cpu.direct);
  for (const name of Object.keys(variants)) {
    const cs = cpu[name];
    lines.push(
      `| ${name} | ${us(median(cs))} | ${us(Math.min(...cs))}-${us(Math.max(...cs))} | ${median(cs) - base >= 0 ? '+' : ''}${us(median(cs) - base)} | ${us(median(wall[name]))} |`,
    );
  }
  lines.push('', '| SDK check of one call | µs (median) |', '|---|---|');
  for (const [name, v] of Object.entries(pieceUs)) lines.push(`| ${name} | ${v.toFixed(1)} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
