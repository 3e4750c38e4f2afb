import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { mcpSdk } from './lib/root-deps.mjs';
import { serveScriptedModel, spawnScriptedModel, textTurnOptions } from './lib/scripted-model-child.mjs';
import { FINAL_ANSWER } from './lib/task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
// The MCP server child's build: --dist (the parent passes --ref-dist's to the `mcpref` child), else this checkout's.
const dist = args.role === 'mcp' && args.dist ? path.resolve(args.dist) : path.join(here, '..', 'dist');
const QUESTION = 'Summarise the ten documents in one sentence.';

/** This process's main thread's CPU µs (Linux's schedstat; elsewhere the whole process's). */
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
function mainThreadCpu() {
  if (existsSync(schedstat)) return Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1e3;
  const { user, system } = process.cpuUsage();
  return user + system;
}

if (args.role === 'model') {
  await serveScriptedModel();
} else if (args.role === 'mcp') {
  // Child: the agent as an MCP server over stdio.
  const { createMcpServer } = await import(pathToFileURL(path.join(dist, 'server', 'mcp', 'index.js')).href);
  const { createAgent, MemorySessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const { McpStdioServerTransport, withAskLane } = await import(
    pathToFileURL(path.join(dist, 'server', 'mcp', 'index.js')).href
  );
  const { StdioServerTransport } = await import(mcpSdk('server/stdio.js'));
  const options = textTurnOptions(args['base-url']);
  const store = new MemorySessionStore();
  const server = createMcpServer({ name: 'bench', agent: () => options, store });
  // The bench's own probe: this process's CPU time so far (not part of what is measured).
  // The server's own wall of each tools/call, from its line handed to the server to its answer handed
  // to the transport (µs summed by tool name; filled in below, after connect).
  const serverWall = {};
  server.registerTool('bench_cpu', { description: 'CPU microseconds used' }, () => {
    const { user, system } = process.cpuUsage();
    return {
      content: [{ type: 'text', text: `${user + system} ${mainThreadCpu()} ${JSON.stringify(serverWall)}` }],
    };
  });
  // The `sdirect` variant's probe: the `direct` turn (createAgent, send, close), run in this process
  // through a call of a tool with no schemas: the turn in the server process, with the MCP round trip
  // of `rtt` around it but none of ask_'s own work.
  server.registerTool('bench_direct', { description: 'one direct turn' }, async () => {
    const agent = createAgent({ ...options, store, session: randomUUID() });
    const result = await agent.send(QUESTION);
    await agent.close();
    return { content: [{ type: 'text', text: result.success ? 'ok' : 'failed' }] };
  });
  // The `mcpnocheck` variant's probe (measurement only): ask_'s own work (runAsk, the same code
  // ask_bench runs) registered without input and output schemas, so that McpServer checks neither; the
  // Server's own CallToolRequest / CallToolResult parses still run. mcp - mcpnocheck is what
  // McpServer's checks of ask_'s schemas cost a call.
  const { runAsk } = await import(pathToFileURL(path.join(dist, 'server', 'mcp', 'ask-turn.js')).href);
  const { RunningSessions } = await import(
    pathToFileURL(path.join(dist, 'server', 'mcp', 'running-sessions.js')).href
  );
  const target = {
    name: 'bench',
    toolName: 'bench_ask_unchecked',
    source: () => options,
    store,
    runtime: {},
    allow: new Set(),
    maxMessageChars: 200_000,
    approvalTimeoutMs: 600_000,
    running: new RunningSessions(),
    pollMs: 200,
  };
  server.registerTool('bench_ask_unchecked', { description: 'ask_bench without schemas' }, (extra) =>
    runAsk(target, { message: QUESTION }, { principal: 'local', signal: extra.signal }),
  );
  // The `lrtt` and `ldirect` variants' probes: own tools (registerOwnTools, as ask_ is registered),
  // so that their calls take the stdio lane as ask_'s do. `bench_lane_noop` answers at once (the round
  // trip floor of an ask_ call: the client, both pipes, the transport, the lane); `bench_lane_direct` runs
  // `direct`'s turn (createAgent, send, close) there: mcp - ldirect is ask_'s own work, ldirect - lrtt
  // the turn in the server process.
  const ownToolsModule = pathToFileURL(path.join(dist, 'server', 'mcp', 'own-tool-calls.js')).href;
  const { registerOwnTools } = existsSync(fileURLToPath(ownToolsModule)) ? await import(ownToolsModule) : {};
  if (registerOwnTools) {
    const { z } = await import('./lib/root-deps.mjs');
    const ok = { content: [{ type: 'text', text: 'ok' }] };
    registerOwnTools(server, [
      {
        name: 'bench_lane_noop',
        config: { description: 'answers at once, through the stdio lane', inputSchema: z.object({}) },
        call: async () => ok,
      },
      {
        name: 'bench_lane_direct',
        config: { description: 'one direct turn, through the stdio lane', inputSchema: z.object({}) },
        call: async () => {
          const agent = createAgent({ ...options, store, session: randomUUID() });
          const result = await agent.send(QUESTION);
          await agent.close();
          return result.success ? ok : { content: [{ type: 'text', text: 'failed' }] };
        },
      },
    ]);
  }
  // --transport=sdk: the SDK's StdioServerTransport (the `mcpsdk` variant); else agentloop's, as `agentloop mcp serve` runs.
  // agentloop mcp serve's stdio: ask_ calls answered below the SDK's Protocol (withAskLane), where the
  // build has it; --lane=off (the `mcpnolane` variant): through the Protocol, as before the lane.
  const raw = args.transport === 'sdk' ? new StdioServerTransport() : new McpStdioServerTransport();
  await server.connect(withAskLane && args.lane !== 'off' ? withAskLane(server, raw) : raw);
  // Around the raw transport (under the lane): when a call's line came and when its answer left
  // (`<tool>`); and from the stdin chunk that brought the line to the answer's `write` returned
  // (`<tool>+`: the transport's read, parse, stringify and write too).
  const callStarts = new Map();
  let chunkAt = 0n;
  process.stdin.prependListener('data', () => {
    chunkAt = process.hrtime.bigint();
  });
  const handOver = raw.onmessage;
  raw.onmessage = (message, extra) => {
    if (message.method === 'tools/call')
      callStarts.set(message.id, [process.hrtime.bigint(), message.params?.name, chunkAt]);
    handOver(message, extra);
  };
  const sendRaw = raw.send.bind(raw);
  raw.send = (message, options) => {
    const start = 'id' in message && !('method' in message) ? callStarts.get(message.id) : undefined;
    if (!start) return sendRaw(message, options);
    callStarts.delete(message.id);
    const [at, tool, chunk] = start;
    serverWall[tool] = (serverWall[tool] ?? 0) + Number(process.hrtime.bigint() - at) / 1e3;
    const sent = sendRaw(message, options); // the write is made before send returns (a pipe, Linux)
    serverWall[`${tool}+`] = (serverWall[`${tool}+`] ?? 0) + Number(process.hrtime.bigint() - chunk) / 1e3;
    return sent;
  };
} else {
  await main();
}

async function main() {
  const TURNS = Number(args.turns ?? 100);
  const ROUNDS = Number(args.rounds ?? 7);
  const WARMUP = Number(args.warmup ?? 30);
  const { createAgent, MemorySessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const { Client } = await import(mcpSdk('client/index.js'));
  const { StdioClientTransport } = await import(mcpSdk('client/stdio.js'));

  const model = await spawnScriptedModel(fileURLToPath(import.meta.url));
  const baseURL = model.baseURL;

  const options = textTurnOptions(baseURL);
  const store = new MemorySessionStore();
  const direct = async () => {
    const agent = createAgent({ ...options, store, session: randomUUID() });
    const result = await agent.send(QUESTION);
    await agent.close();
    if (!result.success) throw new Error(`direct turn failed: ${result.error ?? result.terminateReason}`);
  };
  // `dgap` (measurement only): `direct`'s turn, then this thread sleeps (off the CPU, Atomics.wait) for
  // --gap-ms (0.5), about what a server child sleeps between its turns while the client reads the answer
  // and sends the next call. Its wall counts the sleep; its main thread's CPU is what to compare with
  // `direct`'s (does the same turn cost more CPU after an idle gap, its caches taken by other processes?).
  const gapMs = Number(args['gap-ms'] ?? 0.5);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const dgap = async () => {
    await direct();
    Atomics.wait(sleeper, 0, 0, gapMs);
  };
  const bare = async () => {
    const agent = createAgent(options);
    const result = await agent.send(QUESTION);
    agent.stop();
    if (!result.success) throw new Error(`bare turn failed: ${result.error ?? result.terminateReason}`);
  };
  /**
   * An MCP server child over stdio (`transport`: agentloop's or the SDK's) and the SDK's client of it;
   * `serverDist`: the build it serves from (default this checkout's dist).
   */
  const startServer = async (transport, serverDist, lane) => {
    const client = new Client({ name: 'bench', version: '1' });
    const stdio = new StdioClientTransport({
      command: process.execPath,
      // BENCH_PROF=<dir>: a CPU profile of the MCP server process (node --cpu-prof).
      // BENCH_NODE_FLAGS: more node flags for it (`--perf-basic-prof` for `perf record`; the SDK's
      // transport passes the child no NODE_OPTIONS).
      args: [
        ...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []),
        ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []),
        fileURLToPath(import.meta.url),
        '--role=mcp',
        `--base-url=${baseURL}`,
        `--transport=${transport}`,
        ...(serverDist ? [`--dist=${serverDist}`] : []),
        ...(lane === false ? ['--lane=off'] : []),
      ],
      stderr: 'inherit',
    });
    await client.connect(stdio);
    const turn = async () => {
      const result = await client.callTool({ name: 'ask_bench', arguments: { message: QUESTION } });
      if (result.isError || result.structuredContent?.response !== FINAL_ANSWER) {
        throw new Error(`mcp turn failed: ${JSON.stringify(result.content)}`);
      }
    };
    /** The MCP server process's CPU µs so far: the whole process's, and its main thread's. */
    const cpu = async () => {
      const result = await client.callTool({ name: 'bench_cpu', arguments: {} });
      const [all, main, walls] = result.content[0].text.split(' ');
      return { all: Number(all), main: Number(main), walls: JSON.parse(walls) };
    };
    return { client, turn, cpu, pid: stdio.pid };
  };
  const ownCpu = () => {
    const { user, system } = process.cpuUsage();
    return { all: user + system, main: mainThreadCpu() };
  };

  // Default: direct and mcp, the issue's ratio. Each process then runs one agent turn per measured turn
  // (the bench process `direct`'s, the server child `mcp`'s), so V8 has warmed the turn's code alike in
  // both; with `bare` too the bench process runs two turns to the server's one and is further along its
  // tier-up (mcp35c measured the default of direct,bare,mcp overstating mcp / direct by 0.1-0.2x).
  // --variants=...: others (bare: createAgent without a store, for the store's share).
  // mcp: agentloop's stdio transport (what `agentloop mcp serve` runs); mcpsdk (only when asked for): a
  // second server child on the SDK's StdioServerTransport, for the two in one run.
  // rtt (only when asked for): an MCP call of the probe tool, no turn: the transport's and the SDK's
  // round trip alone.
  // sdirect (only when asked for): `direct`'s turn run inside the MCP server process through a probe
  // tool (mcp - sdirect is ask_'s own work; sdirect - rtt the turn in that process).
  // mcpnocheck (only when asked for): ask_'s work without McpServer's schema checks (measurement only).
  // mcpref (only with --ref-dist=<dir>): `mcp` served by a second child from another build (a copy of
  // main's dist, say), for a before/after pair in one run; `mcp / mcpref` is printed. --mcp-dist=<dir>:
  // the `mcp` child's build (default this checkout's), to swap the two children's builds between runs.
  // dgap (only when asked for): `direct` with an idle gap after each turn (measurement only; above).
  // mcpnolane (only when asked for): `mcp` from the same build with ask_ calls through the SDK's Protocol
  // (no withAskLane), for the lane's before/after in one run; `mcp / mcpnolane` is printed.
  // lrtt, ldirect (only when asked for): rtt and sdirect through the stdio lane (own tools, as ask_'s
  // calls go): mcp - ldirect is ask_'s own work, ldirect - lrtt the turn in the server process.
  const names = [
    'direct',
    'dgap',
    'bare',
    'mcp',
    'mcpsdk',
    'rtt',
    'sdirect',
    'lrtt',
    'ldirect',
    'mcpnocheck',
    'mcpref',
    'mcpnolane',
  ];
  const picked = args.variants ? args.variants.split(',') : ['direct', 'mcp'];
  const unknown = picked.filter((k) => !names.includes(k));
  if (unknown.length > 0)
    throw new Error(`--variants: no variant ${unknown.join(', ')} (${names.join(', ')})`);
  const servers = {};
  if (['mcp', 'rtt', 'sdirect', 'lrtt', 'ldirect'].some((k) => picked.includes(k)))
    servers.mcp = await startServer('agentloop', args['mcp-dist'] && path.resolve(args['mcp-dist']));
  if (picked.includes('mcpsdk')) servers.mcpsdk = await startServer('sdk');
  if (picked.includes('mcpnolane'))
    servers.mcpnolane = await startServer(
      'agentloop',
      args['mcp-dist'] && path.resolve(args['mcp-dist']),
      false,
    );
  if (picked.includes('mcpref')) {
    if (!args['ref-dist']) throw new Error('--variants=mcpref needs --ref-dist=<a dist folder>');
    servers.mcpref = await startServer('agentloop', path.resolve(args['ref-dist']));
  }
  // --pin=split: the model child's main thread on CPU 0, this process's and every MCP server child's on
  // CPU 1; --pin=same: all of them on CPU 1 (`taskset -p`: main threads only; V8's and libuv's worker
  // threads stay free: pinned with all threads under `chrt -f`, same-priority threads starved each other
  // on one core and a call timed out). Unpinned, the kernel places the processes as it likes (seen once:
  // this process and the model on one core, a server child on the other, so that `mcp`'s turn talked to
  // the model across cores and `direct`'s did not); pinned, every turn has the same placement towards the
  // model. mcp35d measured no difference in mcp / direct the bench resolves (bench/README.md).
  if (args.pin) {
    if (args.pin !== 'split' && args.pin !== 'same') throw new Error('--pin: split or same');
    const pin = (cpu, pid) => execFileSync('taskset', ['-p', '-c', String(cpu), String(pid)]);
    pin(args.pin === 'split' ? 0 : 1, model.pid);
    pin(1, process.pid);
    for (const server of Object.values(servers)) pin(1, server.pid);
  }
  const all = {
    direct,
    dgap,
    bare,
    mcp: servers.mcp?.turn,
    mcpsdk: servers.mcpsdk?.turn,
    mcpref: servers.mcpref?.turn,
    mcpnolane: servers.mcpnolane?.turn,
    rtt: async () => {
      await servers.mcp.cpu();
    },
    mcpnocheck: async () => {
      const result = await servers.mcp.client.callTool({ name: 'bench_ask_unchecked', arguments: {} });
      if (result.isError || result.structuredContent?.response !== FINAL_ANSWER) {
        throw new Error(`mcpnocheck turn failed: ${JSON.stringify(result.content)}`);
      }
    },
    lrtt: async () => {
      const result = await servers.mcp.client.callTool({ name: 'bench_lane_noop', arguments: {} });
      if (result.content[0].text !== 'ok') throw new Error('lrtt call failed');
    },
    ldirect: async () => {
      const result = await servers.mcp.client.callTool({ name: 'bench_lane_direct', arguments: {} });
      if (result.content[0].text !== 'ok') throw new Error('ldirect turn failed');
    },
    sdirect: async () => {
      const result = await servers.mcp.client.callTool({ name: 'bench_direct', arguments: {} });
      if (result.content[0].text !== 'ok') throw new Error('sdirect turn failed');
    },
  };
  const variants = Object.fromEntries(picked.map((k) => [k, all[k]]));
  /** An empty list of figures for each variant picked. */
  const perVariant = () => Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const perTurn = perVariant();
  // CPU ms a turn: this process's, plus the MCP server's for mcp (the model server's never counts).
  const cpuPerTurn = perVariant();
  // The variants whose turn runs in the MCP server child (its CPU and wall are read from there).
  const SERVER_VARIANTS = [
    'mcp',
    'mcpsdk',
    'sdirect',
    'lrtt',
    'ldirect',
    'mcpnocheck',
    'mcpref',
    'mcpnolane',
  ];
  const perServerVariant = () => Object.fromEntries(SERVER_VARIANTS.map((k) => [k, []]));
  const serverCpuPerTurn = perServerVariant();
  // The main thread's CPU ms a turn (V8's compiler and GC threads left out: their work swings by a
  // millisecond a turn between rounds): this process's, plus the server's for mcp.
  const mainCpuPerTurn = perVariant();
  const serverMainCpuPerTurn = perServerVariant();
  // The server's wall ms a call (its line in to its answer out), by variant, and the tool each calls.
  const serverWallPerTurn = perServerVariant();
  const serverOuterWallPerTurn = perServerVariant();
  const TOOL_OF = {
    mcp: 'ask_bench',
    mcpsdk: 'ask_bench',
    mcpref: 'ask_bench',
    mcpnolane: 'ask_bench',
    sdirect: 'bench_direct',
    lrtt: 'bench_lane_noop',
    ldirect: 'bench_lane_direct',
    mcpnocheck: 'bench_ask_unchecked',
  };
  // --server-warmup=N: N more ask_ turns for each MCP server child first. The bench process runs every
  // in-process variant (direct and bare by default), so its agent code gets more warm-up than a server
  // child's; N = WARMUP evens the warm-up of the default variants (one warm-up per process, not per variant).
  const SERVER_WARMUP = Number(args['server-warmup'] ?? 0);
  for (const name of ['mcp', 'mcpsdk', 'mcpref', 'mcpnolane'])
    if (variants[name]) for (let i = 0; i < SERVER_WARMUP; i++) await variants[name]();
  for (const run of Object.values(variants)) for (let i = 0; i < WARMUP; i++) await run();
  // --alternate: odd rounds run the variants in reverse order, so that no variant always follows another.
  const order = Object.entries(variants);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of args.alternate && round % 2 === 1 ? [...order].reverse() : order) {
      const server =
        name === 'mcp' || name === 'mcpsdk' || name === 'mcpref' || name === 'mcpnolane'
          ? servers[name]
          : name === 'sdirect' || name === 'mcpnocheck' || name === 'lrtt' || name === 'ldirect'
            ? servers.mcp
            : undefined;
      const child0 = server ? await server.cpu() : { all: 0, main: 0 };
      const cpu0 = ownCpu();
      const start = process.hrtime.bigint();
      for (let i = 0; i < TURNS; i++) await run();
      const end = process.hrtime.bigint();
      perTurn[name].push(Number(end - start) / 1e6 / TURNS);
      // BENCH_MARKS=1: each round's CLOCK_MONOTONIC window on stderr (to cut a `perf record -k mono` to it).
      if (process.env.BENCH_MARKS) process.stderr.write(`mark ${name} ${start} ${end}\n`);
      const cpu1 = ownCpu();
      const child1 = server ? await server.cpu() : child0;
      const child = child1.all - child0.all;
      cpuPerTurn[name].push((cpu1.all - cpu0.all + child) / 1e3 / TURNS);
      mainCpuPerTurn[name].push((cpu1.main - cpu0.main + child1.main - child0.main) / 1e3 / TURNS);
      if (server) {
        serverCpuPerTurn[name].push(child / 1e3 / TURNS);
        serverMainCpuPerTurn[name].push((child1.main - child0.main) / 1e3 / TURNS);
        const tool = TOOL_OF[name];
        serverWallPerTurn[name].push(((child1.walls[tool] ?? 0) - (child0.walls[tool] ?? 0)) / 1e3 / TURNS);
        const outer = `${tool}+`;
        serverOuterWallPerTurn[name].push(
          ((child1.walls[outer] ?? 0) - (child0.walls[outer] ?? 0)) / 1e3 / TURNS,
        );
      }
    }
  }
  for (const server of Object.values(servers)) await server.client.close();
  model.stop();

  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const ms = (x) => x.toFixed(2);
  const lines = [
    `MCP server bench: ${TURNS} text turns a round, ${ROUNDS} rounds, ${WARMUP} warm-up turns a variant (${SERVER_WARMUP} more for each server child); node ${process.version}, ${cpus().length} cores`,
    "| variant | wall ms per turn (median) | min-max over rounds | CPU ms per turn (median) | min-max | main threads' CPU ms (median) |",
    '|---|---|---|---|---|---|',
  ];
  for (const name of Object.keys(variants)) {
    const xs = perTurn[name];
    const cs = cpuPerTurn[name];
    lines.push(
      `| ${name} | ${ms(median(xs))} | ${ms(Math.min(...xs))}-${ms(Math.max(...xs))} | ${ms(median(cs))} | ${ms(Math.min(...cs))}-${ms(Math.max(...cs))} | ${ms(median(mainCpuPerTurn[name]))} |`,
    );
  }
  lines.push('');
  const walls = Object.keys(variants).filter((k) => serverWallPerTurn[k]?.length > 0);
  if (walls.length > 0) {
    lines.push(
      `The server's own wall a call, its line in to its answer out (median ms): ${walls.map((k) => `${k} ${ms(median(serverWallPerTurn[k]))}`).join(', ')}`,
      `The same from the stdin chunk that brought the line to the answer's write returned: ${walls.map((k) => `${k} ${ms(median(serverOuterWallPerTurn[k]))}`).join(', ')}`,
    );
  }
  for (const name of ['mcp', 'mcpsdk', 'sdirect', 'ldirect', 'mcpnocheck', 'mcpref', 'mcpnolane']) {
    if (!variants[name] || !variants.direct) continue;
    const ratio = median(perTurn[name]) / median(perTurn.direct);
    const paired = perTurn[name].map((x, i) => x / perTurn.direct[i]);
    lines.push(
      `${name} / direct: ${ratio.toFixed(2)}x (paired rounds ${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)}); target <= 1.3x: ${ratio <= 1.3 ? 'met' : 'missed'}`,
    );
    if (variants.bare)
      lines.push(`${name} / bare: ${(median(perTurn[name]) / median(perTurn.bare)).toFixed(2)}x`);
    lines.push(
      `CPU, ${name} (client + server processes) / direct: ${(median(cpuPerTurn[name]) / median(cpuPerTurn.direct)).toFixed(2)}x; of ${name}'s, the server process ${ms(median(serverCpuPerTurn[name]))} ms a turn`,
      `Main threads' CPU, ${name} / direct: ${(median(mainCpuPerTurn[name]) / median(mainCpuPerTurn.direct)).toFixed(2)}x; the server's main thread ${ms(median(serverMainCpuPerTurn[name]))} ms a turn against direct's ${ms(median(mainCpuPerTurn.direct))}`,
    );
  }
  if (variants.mcp && variants.mcpsdk) {
    const paired = perTurn.mcp.map((x, i) => x / perTurn.mcpsdk[i]);
    lines.push(
      `mcp / mcpsdk (agentloop's stdio transport against the SDK's): ${(median(perTurn.mcp) / median(perTurn.mcpsdk)).toFixed(3)}x wall (paired ${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)}); server main thread ${ms(median(serverMainCpuPerTurn.mcp))} against ${ms(median(serverMainCpuPerTurn.mcpsdk))} ms a turn`,
    );
  }
  if (variants.mcp && variants.mcpnolane) {
    const paired = perTurn.mcp.map((x, i) => x / perTurn.mcpnolane[i]);
    lines.push(
      `mcp / mcpnolane (ask_ calls below the Protocol against through it): ${(median(perTurn.mcp) / median(perTurn.mcpnolane)).toFixed(3)}x wall (paired ${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)}); server main thread ${ms(median(serverMainCpuPerTurn.mcp))} against ${ms(median(serverMainCpuPerTurn.mcpnolane))} ms a turn`,
    );
  }
  if (variants.mcp && variants.mcpref) {
    const paired = perTurn.mcp.map((x, i) => x / perTurn.mcpref[i]);
    lines.push(
      `mcp / mcpref (this build against --ref-dist's): ${(median(perTurn.mcp) / median(perTurn.mcpref)).toFixed(3)}x wall (paired ${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)}); server main thread ${ms(median(serverMainCpuPerTurn.mcp))} against ${ms(median(serverMainCpuPerTurn.mcpref))} ms a turn`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
