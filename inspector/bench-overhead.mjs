// What an attached inspector costs the agent, on the benchmark task (bench/lib/task.mjs: one session
// is a user message, 10 model turns each asking for one tool call, then a final answer; 11 model
// calls over the scripted server, streamed).
//
// Modes, run in alternating rounds so that drift hits them alike:
//   none        no inspector
//   idle        the local inspector attached (server.inspect + attach), no page open
//   page        the same with a page connected (a WebSocket client reading every batch)
//   stately     the Stately option (`inspect: { url, serve: false }`) sending to a local WebSocket sink
//
// Usage: npm run build && node inspector/bench-overhead.mjs [--sessions 40] [--rounds 6]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import {
  lookup,
  MODEL,
  SYSTEM_PROMPT,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  USER_PROMPT,
} from '../bench/lib/task.mjs';
import { createAgent, defineTool, startInspectorServer } from '../dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: { sessions: { type: 'string', default: '40' }, rounds: { type: 'string', default: '6' } },
});
const SESSIONS = Number(values.sessions);
const ROUNDS = Number(values.rounds);

// The scripted server runs in its own process (bench/lib/server.mjs), so its CPU is not the agent's.
const serverProcess = spawn(process.execPath, [path.join(root, 'bench/lib/server.mjs')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const urls = await new Promise((resolve, reject) => {
  let buffer = '';
  serverProcess.stdout.on('data', (chunk) => {
    buffer += chunk;
    const line = buffer.split('\n')[0];
    if (buffer.includes('\n')) resolve(JSON.parse(line));
  });
  serverProcess.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
});

const client = new OpenAI({ baseURL: urls.task, apiKey: 'bench-secret-key', maxRetries: 0 });
const tool = defineTool({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  parameters: z.object({ key: z.string() }),
  execute: (args) => lookup(args),
});
const base = {
  client,
  model: MODEL,
  instructions: SYSTEM_PROMPT,
  tools: [tool],
  loopControlTools: false,
  contextWindow: false,
};

// Inspectors for the modes that need them.
const idleServer = await startInspectorServer({ port: 0 });
const pageServer = await startInspectorServer({ port: 0 });
const page = new WebSocket(`ws://127.0.0.1:${pageServer.port}/ws${new URL(pageServer.url).search}`);
let pageBytes = 0;
let pageMessages = 0;
page.on('message', (data) => {
  pageBytes += data.length;
  pageMessages += 1;
  JSON.parse(data.toString()); // the page parses every message
});
await new Promise((resolve) => page.once('open', resolve));
const sink = new WebSocketServer({ port: 0, host: '127.0.0.1' });
await new Promise((resolve) => sink.once('listening', resolve));
let statelyBytes = 0;
sink.on('connection', (socket) => socket.on('message', (data) => (statelyBytes += data.length)));
const sinkUrl = `ws://127.0.0.1:${sink.address().port}`;

async function session(mode) {
  let agent;
  if (mode === 'none') agent = createAgent(base);
  else if (mode === 'stately') agent = createAgent({ ...base, inspect: { url: sinkUrl, serve: false } });
  else {
    const server = mode === 'idle' ? idleServer : pageServer;
    agent = createAgent({ ...base, inspect: server.inspect });
    agent.detach = server.attach(agent, { name: 'bench' });
  }
  const result = await agent.send(USER_PROMPT);
  agent.stop();
  agent.detach?.();
  if (!result.success || result.iterations !== 11)
    throw new Error(`session failed: ${result.terminateReason}`);
}

const modes = ['none', 'idle', 'page', 'stately'];
const perSession = Object.fromEntries(modes.map((m) => [m, []]));
for (const mode of modes) for (let i = 0; i < 5; i++) await session(mode); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
    const start = performance.now();
    for (let i = 0; i < SESSIONS; i++) await session(mode);
    perSession[mode].push((performance.now() - start) / SESSIONS);
  }
}
// Let the last batches go out before reading the byte counts.
await new Promise((resolve) => setTimeout(resolve, 300));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const baseline = median(perSession.none);
const total = ROUNDS * SESSIONS;
const rows = modes.map((mode) => {
  const ms = median(perSession[mode]);
  return {
    mode,
    'ms/session (median of rounds)': ms.toFixed(2),
    'min..max': `${Math.min(...perSession[mode]).toFixed(2)}..${Math.max(...perSession[mode]).toFixed(2)}`,
    overhead: mode === 'none' ? '' : `${(((ms - baseline) / baseline) * 100).toFixed(1)}%`,
  };
});
console.log(
  `benchmark task: ${total} sessions per mode (${ROUNDS} rounds x ${SESSIONS}), 11 model calls each, Node ${process.version}`,
);
console.table(rows);
const warm = 5;
console.log(
  `page: ${pageMessages} WebSocket messages, ${(pageBytes / 1024).toFixed(0)} KiB for ${total + warm} sessions ` +
    `(${(pageBytes / (total + warm) / 1024).toFixed(1)} KiB/session); stately: ${(statelyBytes / (total + warm) / 1024).toFixed(1)} KiB/session`,
);

page.close();
await idleServer.close();
await pageServer.close();
sink.close();
serverProcess.stdin.end();
