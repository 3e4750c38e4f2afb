// What V8 compiles while turns repeat (issue 35's "V8 never stops compiling"): runs the same text turn
// as bench/mcp-server.mjs again and again in one process, `direct` (agent.send() on a new agent and
// session) or `mcp` (createMcpServer and the SDK's Client over its in-memory transport, both sides in
// this process), under `node --trace-opt --trace-deopt`, and prints per window of turns how many
// functions TurboFan compiled, their summed compile time (V8's own figure, wall on its worker thread)
// and the deopts; and how many `new Function` / `Function()` calls the turns made after warm-up (zod 4
// compiles each object schema's parser with one on the schema's first parse: a schema built per call
// would show here).
//
//   npm run build && node bench/v8-tier-up.mjs --mode=direct --turns=3000 --every=250
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { mcpSdk } from './lib/root-deps.mjs';
import { serveScriptedModel, spawnScriptedModel, textTurnOptions } from './lib/scripted-model-child.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const args = flagArgs();
const TURNS = Number(args.turns ?? 3000);
const EVERY = Number(args.every ?? 250);
const WARMUP = Number(args.warmup ?? 30);

if (args.role === 'model') {
  await serveScriptedModel();
} else if (args.role === 'turns') {
  await turns();
} else {
  await report();
}

/** The parent: runs the turns in a child under --trace-opt and sums its trace by window. */
async function report() {
  const child = spawn(
    process.execPath,
    [
      '--trace-opt',
      '--trace-deopt',
      '--allow-natives-syntax',
      fileURLToPath(import.meta.url),
      '--role=turns',
      ...process.argv.slice(2),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let text = '';
  child.stdout.on('data', (d) => {
    text += d;
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const rows = [];
  let row;
  for (const line of text.split('\n')) {
    const marker = /completed compiling .*MARKER_(\d+)/.exec(line);
    if (marker) {
      row = { from: Number(marker[1]), compiles: 0, ms: 0, deopts: 0, names: new Map() };
      rows.push(row);
      continue;
    }
    if (!row) continue;
    const compiled =
      /completed compiling \S+ <JSFunction ?([^ >]*) \(sfi = (\w+)\)>.*took [0-9.]+, ([0-9.]+), [0-9.]+ ms/.exec(
        line,
      );
    if (compiled) {
      row.compiles += 1;
      row.ms += Number(compiled[3]);
      // By shared function info: the same function compiled again (V8 may move an SFI, rarely).
      const key = `${compiled[1] || '(anonymous)'} ${compiled[2]}`;
      row.names.set(key, (row.names.get(key) ?? 0) + 1);
    } else if (line.startsWith('[bailout (kind: deopt')) row.deopts += 1;
  }
  rows.pop(); // the last marker closes the last window
  const out = [
    `V8 tier-up, mode ${args.mode ?? 'direct'}: ${TURNS} turns after ${WARMUP} warm-up turns; node ${process.version}`,
    '| turns | TurboFan compiles | compile ms (V8, summed) | per turn ms | deopts | the same function compiled again in the window |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const again = [...r.names].filter(([, n]) => n > 1).map(([key, n]) => `${key.split(' ')[0]} x${n}`);
    out.push(
      `| ${r.from}-${r.from + EVERY} | ${r.compiles} | ${r.ms.toFixed(0)} | ${(r.ms / EVERY).toFixed(2)} | ${r.deopts} | ${again.join(', ') || '-'} |`,
    );
  }
  const summary = /^new Function.*$/m.exec(text);
  if (summary) out.push('', summary[0]);
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The child: the turns, a marker function optimized at each window's start, the `new Function` count. */
async function turns() {
  const RealFunction = Function;
  let counting = false;
  let made = 0;
  globalThis.Function = new Proxy(RealFunction, {
    construct(target, a) {
      if (counting) made += 1;
      return Reflect.construct(target, a);
    },
    apply(target, self, a) {
      if (counting) made += 1;
      return Reflect.apply(target, self, a);
    },
  });
  const { createAgent, MemorySessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const model = await spawnScriptedModel(fileURLToPath(import.meta.url));
  const options = textTurnOptions(model.baseURL);
  const store = new MemorySessionStore();
  let run;
  if (args.mode === 'mcp') {
    const { createMcpServer } = await import(
      pathToFileURL(path.join(dist, 'server', 'mcp', 'index.js')).href
    );
    const { Client } = await import(mcpSdk('client/index.js'));
    const { InMemoryTransport } = await import(mcpSdk('inMemory.js'));
    const server = createMcpServer({ name: 'bench', agent: () => options, store });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(clientSide);
    run = async () => {
      const result = await client.callTool({ name: 'ask_bench', arguments: { message: 'Summarise.' } });
      if (result.isError) throw new Error(JSON.stringify(result.content));
    };
  } else {
    run = async () => {
      const agent = createAgent({ ...options, store, session: randomUUID() });
      const result = await agent.send('Summarise.');
      await agent.close();
      if (!result.success) throw new Error(`turn failed: ${result.error}`);
    };
  }
  // A window's start: a fresh function optimized synchronously, so its line lands in V8's trace in order.
  const mark = (k) =>
    new RealFunction(
      `function MARKER_${k}() { return ${k}; } %PrepareFunctionForOptimization(MARKER_${k}); MARKER_${k}(); %OptimizeFunctionOnNextCall(MARKER_${k}); MARKER_${k}();`,
    )();
  for (let i = 0; i < WARMUP; i++) await run();
  counting = true;
  for (let i = 0; i < TURNS; i++) {
    if (i % EVERY === 0) mark(i);
    await run();
  }
  counting = false;
  mark(TURNS);
  process.stdout.write(`new Function / Function() calls after warm-up: ${made} in ${TURNS} turns\n`);
  model.stop();
  process.exit(0);
}
