// Long sessions (issue 28): what one turn costs at turn 50, 200 and 800 of one session, for a
// hand-written loop and for agentloop on the memory, file and PostgreSQL stores; the bytes a rest
// point writes (file store: the record file and the transcript lines; PostgreSQL: the save
// statement's text and parameters) at turns 50 and 800; and the restore (`ready()` in a new process)
// of a file-store session of 1,600 tool rounds, with the RSS after it.
// Each turn: a user message, one tool call (200-character arguments, a 300-character result), an
// answer. No pruning (`contextWindow: false`), not streamed. Each harness is a child process
// (`node --expose-gc`) running the scripted server and the harness (as issue 28 measured it); the
// children of a round run in lock-step, turn by turn, so that the machine's load at any moment hits
// them all alike; per turn the wall time and the CPU time of that process, and per window that
// process's CPU from the end of the turn before it to the end of its last turn (the gaps between turns
// included: V8's helper threads finish a turn's garbage after it returns, and a harness whose turns
// wait on the disk has more of that inside its turns). Ratios to the hand-written loop are taken within
// a round, then their median over rounds.
// npm run build && node bench/long-session.mjs [--turns=800] [--rounds=2] [--stores=memory,file,postgres]
//   [--restore-rounds=1600] [--window=50] [--dist=dist] [--out=file.json] [--cpu-prof=dir]
// `--dist` picks the build measured (e.g. main's, built into another folder whose node_modules
// resolves), so that before and after run in the same conditions; `--cpu-prof` writes each child's
// V8 profile into `dir` (summarize with bench/lib/profile-summary.mjs).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
/** The builds measured: `--dist=a,b` runs both, interleaved, in one run (before and after a change). */
const dists = (args.dist ?? path.join(here, '..', 'dist')).split(',').map((d) => path.resolve(d));
const dist = dists[0];
/** Turns per measured window (ending at turns 50, 200, 800): long enough to hold several full GCs. */
const WINDOW = Number(args.window ?? 50);
const WARMUP_TURNS = 30;
const ARGS = 'a'.repeat(190);
const RESULT = 'r'.repeat(300);
const SYSTEM = 'You are a research assistant. Use the lookup tool, then answer in one sentence.';

/** The scripted model: a user message gets one tool call, a tool result gets an answer. */
function respond(request) {
  const last = request.messages.at(-1);
  if (last.role === 'tool')
    return { content: `Found it: ${String(last.content).slice(0, 40)}, and that is all.` };
  return { toolCalls: [{ name: 'lookup', arguments: { key: ARGS } }] };
}

const lookup = () => RESULT;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

if (args.child) await child(JSON.parse(args.child));
else await parent();

async function child({ mode, harness, store: storeKind, turns, dir, pgUrl, session }) {
  // The server in this process, as a user's test would run it: its work per request (which grows with
  // the conversation too) counts for both harnesses alike. The same server code for every build.
  const { startScriptedServer } = await import(
    pathToFileURL(path.join(here, '..', 'dist', 'testing', 'index.js')).href
  );
  const { url } = await startScriptedServer({ respond, record: false });
  const { createAgent, defineTool, FileSessionStore, MemorySessionStore } = await import(
    pathToFileURL(path.join(dist, 'index.js')).href
  );
  const { default: OpenAI } = await import(
    pathToFileURL(path.join(dist, '..', 'node_modules', 'openai', 'index.mjs')).href
  );
  const { z } = await import(pathToFileURL(path.join(dist, '..', 'node_modules', 'zod', 'index.js')).href);
  const client = new OpenAI({ baseURL: url, apiKey: 'bench', maxRetries: 0 });
  const tool = defineTool({
    name: 'lookup',
    description: 'Returns the document stored under a key.',
    parameters: z.object({ key: z.string() }),
    execute: lookup,
  });
  const agentOptions = (store, id) => ({
    client,
    model: 'bench-model',
    instructions: SYSTEM,
    tools: [tool],
    stream: false,
    loopControlTools: false,
    planning: false,
    contextWindow: false,
    limits: { maxIterations: 1_000_000, timeoutMs: null },
    store,
    session: id,
  });
  if (mode === 'restore') {
    global.gc?.();
    const before = process.memoryUsage().rss;
    const t = performance.now();
    const agent = createAgent(agentOptions(new FileSessionStore({ dir }), session));
    await agent.ready();
    const ms = performance.now() - t;
    const messages = agent.messages.length;
    global.gc?.();
    const rss = process.memoryUsage().rss;
    agent.stop();
    process.stdout.write(
      `${JSON.stringify({ ms, messages, rssMiB: rss / 2 ** 20, rssBeforeMiB: before / 2 ** 20 })}\n`,
    );
    process.exit(0);
  }
  /** One session of the harness: `runTurn(text, turn)` and `close()`; `bytes` gets what turns 50 and 800 wrote. */
  const open = async (id) => {
    const bytes = {};
    let runTurn;
    let close = async () => {};
    if (harness === 'handwritten') {
      const tools = [
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: 'Returns the document stored under a key.',
            parameters: {
              type: 'object',
              properties: { key: { type: 'string' } },
              required: ['key'],
              additionalProperties: false,
            },
          },
        },
      ];
      const messages = [{ role: 'system', content: SYSTEM }];
      runTurn = async (text) => {
        messages.push({ role: 'user', content: text });
        for (;;) {
          const reply = await client.chat.completions.create({
            model: 'bench-model',
            messages,
            tools,
            tool_choice: 'auto',
          });
          const message = reply.choices[0].message;
          const calls = message.tool_calls ?? [];
          messages.push({
            role: 'assistant',
            content: message.content ?? null,
            ...(calls.length ? { tool_calls: calls } : {}),
          });
          if (calls.length === 0) return;
          for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: lookup() });
        }
      };
    } else {
      let store;
      let measureBytes = async () => ({});
      if (storeKind === 'memory') store = new MemorySessionStore();
      else if (storeKind === 'file') {
        store = new FileSessionStore({ dir });
        const files = store.files(id);
        let transcriptBefore = 0;
        measureBytes = async (phase) => {
          const transcript = (await stat(files.transcript)).size;
          if (phase === 'before') transcriptBefore = transcript;
          else
            return { record: (await stat(files.snapshot)).size, transcript: transcript - transcriptBefore };
        };
      } else {
        const { PostgresSessionStore } = await import(
          pathToFileURL(path.join(dist, 'postgres', 'index.js')).href
        );
        const { default: pg } = await import(
          pathToFileURL(path.join(dist, '..', 'node_modules', 'pg', 'lib', 'index.js')).href
        );
        const pool = new pg.Pool({ connectionString: pgUrl, max: 4 });
        const sizes = { save: 0, append: 0 };
        pool.on('connect', (c) => {
          const query = c.query.bind(c);
          c.query = (text, values, ...rest) => {
            const sql = typeof text === 'string' ? text : text.text;
            const params = typeof text === 'string' ? values : text.values;
            const size = sql.length + JSON.stringify(params ?? []).length;
            if (/SET record =/.test(sql)) sizes.save += size;
            else if (/INSERT INTO \S*transcript/.test(sql)) sizes.append += size;
            return query(text, values, ...rest);
          };
        });
        store = new PostgresSessionStore({ pool }, { schema: `ls_${process.pid}` });
        await store.migrate();
        measureBytes = async (phase) => {
          if (phase === 'before') {
            sizes.save = 0;
            sizes.append = 0;
          } else return { record: sizes.save, transcript: sizes.append };
        };
        close = () => store.close();
      }
      const agent = createAgent(agentOptions(store, id));
      await agent.ready();
      runTurn = async (text, turn) => {
        const measured = turn === 50 || turn === 800;
        if (measured) await measureBytes('before');
        const result = await agent.send(text);
        if (!result.success) throw new Error(`turn ${turn}: ${result.error ?? result.terminateReason}`);
        if (measured) {
          await agent.flush();
          bytes[turn] = await measureBytes('after');
        }
      };
      const stop = close;
      close = async () => {
        await agent.flush();
        agent.stop();
        await stop();
      };
    }
    return { runTurn, close, bytes };
  };
  // Driven by the parent over IPC, one turn at a time, so that every harness of a round runs its turn k
  // next to the others' turn k (lock-step): a change in the machine's load hits them all alike.
  // JIT warm-up first: a short session, so that turn 50 is not measured on code still being compiled.
  let current = await open(`${session}-warmup`);
  let warming = true;
  const perTurn = [];
  const cpuPerTurn = [];
  // The process's CPU time when each measured turn ended (and when the first began): a window's CPU
  // including the gaps between its turns, where V8's helper threads finish the turns' garbage.
  const cpuAtEnd = [];
  let cpuAtStart;
  const cpuTotal = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  process.on('message', async (message) => {
    try {
      if (message.type === 'turn') {
        if (!warming && message.turn < 0) throw new Error('a warm-up turn after the measured ones began');
        if (warming && message.turn > 0) {
          await current.close();
          current = await open(session);
          warming = false;
        }
        if (message.turn === 1) cpuAtStart = cpuTotal();
        const t = performance.now();
        const cpu = process.cpuUsage();
        await current.runTurn(
          message.turn > 0
            ? `Question ${message.turn}: what does the document say?`
            : `Warm-up ${-message.turn}`,
          message.turn,
        );
        const used = process.cpuUsage(cpu);
        if (message.turn > 0) {
          perTurn.push(performance.now() - t);
          cpuPerTurn.push((used.user + used.system) / 1000);
          cpuAtEnd.push(cpuTotal());
        }
        process.send({ type: 'done' });
        return;
      }
      await current.close();
      const windows = {};
      const cpuWindows = {};
      const cpuSpanWindows = {};
      for (const end of [50, 200, 800, 1600]) {
        if (end > turns) continue;
        windows[end] = mean(perTurn.slice(end - WINDOW, end));
        cpuWindows[end] = mean(cpuPerTurn.slice(end - WINDOW, end));
        const from = end - WINDOW > 0 ? cpuAtEnd[end - WINDOW - 1] : cpuAtStart;
        cpuSpanWindows[end] = (cpuAtEnd[end - 1] - from) / WINDOW;
      }
      const rssMiB = process.memoryUsage().rss / 2 ** 20;
      process.send(
        { type: 'result', result: { windows, cpuWindows, cpuSpanWindows, bytes: current.bytes, rssMiB } },
        () => process.exit(0),
      );
    } catch (error) {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exit(1);
    }
  });
  process.send({ type: 'ready' });
}

/**
 * The harnesses of one round, each in its own child process, driven turn by turn: warm-up turns, then
 * turns 1..`turns`, each turn run by every child in turn (the order rotating), then their results.
 */
async function runLockStep(children, turns) {
  const procs = children.map(({ config, build }) => {
    const proc = spawn(process.execPath, childArgv(config, build), {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const exited = new Promise((_, reject) =>
      proc.on('exit', (code) => {
        if (code !== 0) reject(new Error(`child ${JSON.stringify(config)} exited ${code}`));
      }),
    );
    exited.catch(() => {});
    const next = (type) =>
      Promise.race([
        new Promise((resolve) => proc.once('message', (m) => m.type === type && resolve(m))),
        exited,
      ]);
    return { proc, next };
  });
  try {
    await Promise.all(procs.map((p) => p.next('ready')));
    const order = [...Array(WARMUP_TURNS).keys()].map((i) => -(i + 1));
    for (let turn = 1; turn <= turns; turn++) order.push(turn);
    for (const [i, turn] of order.entries()) {
      for (let k = 0; k < procs.length; k++) {
        const p = procs[(i + k) % procs.length];
        const done = p.next('done');
        p.proc.send({ type: 'turn', turn });
        await done;
      }
    }
    return await Promise.all(
      procs.map(async (p) => {
        const result = p.next('result');
        p.proc.send({ type: 'finish' });
        return (await result).result;
      }),
    );
  } finally {
    // A child writes its CPU profile (`--cpu-prof`) as it exits: give it the time, then stop it.
    await Promise.all(
      procs.map(
        (p) =>
          p.proc.exitCode ??
          new Promise((resolve) => {
            const timer = setTimeout(() => p.proc.kill(), 10_000);
            p.proc.once('exit', () => resolve(clearTimeout(timer)));
          }),
      ),
    );
  }
}

/** A child's node arguments: this script with `config`, on `build`; profiled with `--cpu-prof=dir`. */
function childArgv(config, build) {
  const profile = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args['cpu-prof'])}`] : [];
  return [
    ...profile,
    '--expose-gc',
    fileURLToPath(import.meta.url),
    `--dist=${build}`,
    `--child=${JSON.stringify(config)}`,
  ];
}

/** A restore measurement (`mode: 'restore'`): one child that prints its figures and exits. */
function runChild(config, build) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, childArgv(config, build), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
    });
    proc.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').at(-1)))
        : reject(new Error(`child ${JSON.stringify(config)} exited ${code}`)),
    );
  });
}

async function parent() {
  const turns = Number(args.turns ?? 800);
  const rounds = Number(args.rounds ?? 2);
  const restoreRounds = Number(args['restore-rounds'] ?? 1600);
  const stores = (args.stores ?? 'memory,file,postgres').split(',');
  const load = () =>
    execFileSync('uptime')
      .toString()
      .trim()
      .replace(/.*load average: /, '');
  const results = dists.map((build) => ({ dist: build, turns, runs: {}, restore: undefined }));
  const loads = [load()];
  let cluster;
  if (stores.includes('postgres')) {
    const { startPostgresCluster } = await import('../test/support/postgres-cluster.mjs');
    cluster = await startPostgresCluster({ durable: true });
  }
  const work = await mkdtemp(path.join(tmpdir(), 'agentloop-long-'));
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    const configs = [{ harness: 'handwritten' }, ...stores.map((store) => ({ harness: 'agentloop', store }))];
    for (let round = 0; round < rounds && !stopping; round++) {
      const children = [];
      for (const config of configs) {
        for (const [b, result] of results.entries()) {
          const key = config.store ? `agentloop/${config.store}` : config.harness;
          const dir = path.join(work, `${b}-${key.replace('/', '-')}-${round}`);
          const child = {
            mode: 'turns',
            ...config,
            turns,
            dir,
            pgUrl: cluster?.url,
            session: `long-${b}-${round}`,
          };
          children.push({ key, result, config: child, build: result.dist });
        }
      }
      const runs = await runLockStep(children, turns);
      for (const [i, { key, result }] of children.entries()) {
        const run = runs[i];
        result.runs[key] ??= [];
        result.runs[key].push(run);
        process.stderr.write(
          `${result.dist} ${key} round ${round + 1}: ${JSON.stringify(run.cpuWindows)} ${JSON.stringify(run.bytes)}\n`,
        );
      }
      loads.push(load());
    }
    for (const [b, result] of results.entries()) {
      if (restoreRounds <= 0 || stopping) break;
      const dir = path.join(work, `restore-${b}`);
      process.stderr.write(`${result.dist}: making a session of ${restoreRounds} tool rounds...\n`);
      const config = {
        mode: 'turns',
        harness: 'agentloop',
        store: 'file',

        turns: restoreRounds,
        dir,
        session: 'restore',
      };
      await runLockStep([{ config, build: result.dist }], restoreRounds);
      const restores = [];
      for (let i = 0; i < 3; i++)
        restores.push(await runChild({ mode: 'restore', dir, session: 'restore' }, result.dist));
      result.restore = {
        toolRounds: restoreRounds,
        recordBytes: (await readFile(path.join(dir, 'restore', 'snapshot.json'))).length,
        ms: median(restores.map((r) => r.ms)),
        msAll: restores.map((r) => Math.round(r.ms)),
        rssMiB: median(restores.map((r) => r.rssMiB)),
        messages: restores[0].messages,
      };
      loads.push(load());
    }
  } finally {
    await cluster?.stop();
    await rm(work, { recursive: true, force: true });
  }
  const summary = [`load average ${loads.join(' | ')}`, ...results.map(summarize)].join('\n\n');
  process.stdout.write(`${summary}\n`);
  if (args.out) await writeFile(args.out, JSON.stringify({ rounds, loads, results, summary }, null, 2));
}

function summarize(result, _, results) {
  return [
    `dist ${result.dist}`,
    table(result, results, 'windows', 'wall'),
    table(result, results, 'cpuWindows', 'CPU of the harness process'),
    table(result, results, 'cpuSpanWindows', 'CPU of the harness process, the gaps between turns included'),
    details(result),
  ].join('\n');
}

/**
 * Per harness: the median over rounds of the window's ms per turn, and the ratios to the hand-written
 * loop taken round by round (its runs of the same round ran in lock-step with this one: the same
 * moments of the machine's load), then the median of those ratios.
 */
function table(result, results, field, what) {
  const lines = [`${what}:`];
  const ends = [50, 200, 800, 1600].filter((e) => e <= result.turns);
  const last = ends.at(-1);
  const rounds = result.runs.handwritten.length;
  /** The hand-written loop's window in round `r`: the mean of its runs of that round (one per build). */
  const hand = (r, end) => mean(results.map((x) => x.runs.handwritten[r][field][end]));
  lines.push(
    `| harness | ${ends.map((e) => `ms/turn @${e}`).join(' | ')} | @${last} vs hand-written | growth from @50 vs hand-written's |`,
  );
  lines.push(`|---|${ends.map(() => '---|').join('')}---|---|`);
  for (const [key, runs] of Object.entries(result.runs)) {
    const at = (end) => median(runs.map((run) => run[field][end]));
    const rs = [...Array(rounds).keys()];
    const ratio = median(rs.map((r) => runs[r][field][last] / hand(r, last)));
    const growth = median(
      rs.map((r) => runs[r][field][last] / runs[r][field][50] / (hand(r, last) / hand(r, 50))),
    );
    lines.push(
      `| ${key} | ${ends.map((e) => at(e).toFixed(2)).join(' | ')} | ${ratio.toFixed(2)}x | ${growth.toFixed(2)}x |`,
    );
  }
  return lines.join('\n');
}

function details(result) {
  const lines = [];
  for (const key of Object.keys(result.runs)) {
    const bytes = result.runs[key][0].bytes;
    if (bytes[50]?.record !== undefined)
      lines.push(
        `${key} bytes per rest point (record / transcript) @50: ${bytes[50].record} / ${bytes[50].transcript}; @800: ${bytes[800]?.record} / ${bytes[800]?.transcript}`,
      );
  }
  if (result.restore) {
    const r = result.restore;
    lines.push(
      `restore of ${r.toolRounds} tool rounds (${r.messages} messages, record ${r.recordBytes} bytes): ready() ${r.ms.toFixed(0)} ms (${r.msAll.join(', ')}), RSS after ${r.rssMiB.toFixed(0)} MiB`,
    );
  }
  return lines.join('\n');
}
