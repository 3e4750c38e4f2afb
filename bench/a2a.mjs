// What serving a turn over A2A costs: one text turn (one model call, a ~200-character answer, a new
// session on a file store) through A2A `SendMessage` (the SDK's own client, JSON-RPC over HTTP on
// 127.0.0.1, A2A 1.0) against the same turn through `agent.send()` (a new agent on the same store,
// sent, closed: what the server does for a task, minus A2A), in ONE process, interleaved round by
// round. The scripted server runs in its own child process, so its CPU never counts. Target (issue 35):
// A2A <= 1.2x agent.send().
//
//   npm run build && node bench/a2a.mjs [--turns=50] [--rounds=6] [--warmup=10] [--fsync=false]
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { OpenAI } from './lib/root-deps.mjs';
import { FINAL_ANSWER, MODEL, SYSTEM_PROMPT, USER_PROMPT } from './lib/task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const args = flagArgs();
const TURNS = Number(args.turns ?? 50);
const ROUNDS = Number(args.rounds ?? 6);
const WARMUP = Number(args.warmup ?? 10);

const serverScript = `
const { startScriptedServer } = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'testing/index.js')).href)});
const server = await startScriptedServer({ respond: () => ({ content: ${JSON.stringify(FINAL_ANSWER)} }), record: false, keepAliveTimeoutMs: 120000 });
process.stdout.write(JSON.stringify({ url: server.url }) + '\\n');
process.stdin.on('end', async () => { await server.close(); process.exit(0); });
process.stdin.resume();
`;
const child = spawn(process.execPath, ['--input-type=module', '-e', serverScript], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const { url: modelUrl } = await new Promise((resolve) => {
  let buffer = '';
  child.stdout.on('data', (d) => {
    buffer += d;
    if (buffer.includes('\n')) resolve(JSON.parse(buffer.slice(0, buffer.indexOf('\n'))));
  });
});

const { createAgent, FileSessionStore } = await import(pathToFileURL(path.join(dist, 'index.js')).href);
const { startA2aServer } = await import(pathToFileURL(path.join(dist, 'server/a2a/index.js')).href);
const { SendMessageRequest } = await import('@a2a-js/sdk');
const { ClientFactory } = await import('@a2a-js/sdk/client');

const dir = await mkdtemp(path.join(tmpdir(), 'bench-a2a-'));
const store = new FileSessionStore({ dir, fsync: args.fsync !== 'false' });
const client = new OpenAI({ baseURL: modelUrl, apiKey: 'bench', maxRetries: 0 });
const agentOptions = {
  model: MODEL,
  instructions: SYSTEM_PROMPT,
  loopControlTools: false,
  planning: false,
  contextWindow: false,
};

let n = 0;
/** One turn through agent.send(): a new agent on a new session of the store, sent, closed. */
async function direct() {
  const agent = createAgent({ ...agentOptions, client, store, session: `direct-${n++}` });
  const result = await agent.send(USER_PROMPT);
  await agent.close();
  if (result.response !== FINAL_ANSWER) throw new Error(`direct: unexpected answer ${result.response}`);
}

const server = await startA2aServer({ agent: () => agentOptions, store, runtime: { client } });
const a2a = await new ClientFactory().createFromUrl(server.url);
/** One turn through A2A SendMessage (a new context: a new session). */
async function overA2a() {
  const task = await a2a.sendMessage(
    SendMessageRequest.fromJSON({
      message: { messageId: `m-${n++}`, role: 'ROLE_USER', parts: [{ text: USER_PROMPT }] },
    }),
  );
  if (task.status?.state !== 3) throw new Error(`a2a: task ended in state ${task.status?.state}`);
}

/** Wall and CPU (this process: user + system) ms per turn. */
async function timed(fn, turns) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < turns; i++) await fn();
  const wall = Number(process.hrtime.bigint() - start) / 1e6 / turns;
  const { user, system } = process.cpuUsage(cpu);
  return { wall, cpu: (user + system) / 1e3 / turns };
}

await timed(direct, WARMUP);
await timed(overA2a, WARMUP);
const rounds = [];
for (let r = 0; r < ROUNDS; r++) {
  const d = await timed(direct, TURNS);
  const a = await timed(overA2a, TURNS);
  rounds.push({ direct: d.wall, a2a: a.wall, ratio: a.wall / d.wall, directCpu: d.cpu, a2aCpu: a.cpu });
  process.stderr.write(
    `round ${r + 1}: agent.send ${d.wall.toFixed(2)} ms (CPU ${d.cpu.toFixed(2)}), A2A ${a.wall.toFixed(2)} ms (CPU ${a.cpu.toFixed(2)}), ${(a.wall / d.wall).toFixed(2)}x\n`,
  );
}
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const d = median(rounds.map((r) => r.direct));
const a = median(rounds.map((r) => r.a2a));
const ratios = rounds.map((r) => r.ratio);
const dCpu = median(rounds.map((r) => r.directCpu));
const aCpu = median(rounds.map((r) => r.a2aCpu));
console.log(
  JSON.stringify(
    {
      turnsPerRound: TURNS,
      rounds: ROUNDS,
      directMsPerTurn: Number(d.toFixed(2)),
      a2aMsPerTurn: Number(a.toFixed(2)),
      ratio: Number((a / d).toFixed(3)),
      ratioMin: Number(Math.min(...ratios).toFixed(3)),
      ratioMax: Number(Math.max(...ratios).toFixed(3)),
      directCpuMsPerTurn: Number(dCpu.toFixed(2)),
      a2aCpuMsPerTurn: Number(aCpu.toFixed(2)),
      cpuRatio: Number((aCpu / dCpu).toFixed(3)),
      target: 1.2,
    },
    null,
    2,
  ),
);
await server.close();
child.stdin.end();
await rm(dir, { recursive: true, force: true });
