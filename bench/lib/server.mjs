// Child process: the scripted OpenAI-compatible servers the harnesses talk to. Runs apart from the
// harness so that its CPU never counts against the harness. Prints one JSON line with the URLs and
// lives until its stdin closes.
import { pacedTurn, taskTurn } from './task.mjs';

const { startScriptedServer } = await import('../../dist/testing/index.js');

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 50);
// Node's default keep-alive timeout (5 s) closes sockets that a saturated client (1,000 sessions of a
// slow peer) has not reused in time, and a request racing the close fails with "other side closed".
// A real API keeps connections longer; so do these servers.
const keepAliveTimeoutMs = 120_000;
const task = await startScriptedServer({ respond: taskTurn, record: false, keepAliveTimeoutMs });
const slow = await startScriptedServer({ respond: taskTurn, latencyMs, record: false, keepAliveTimeoutMs });
const paced = await startScriptedServer({ respond: pacedTurn, record: false, keepAliveTimeoutMs });
process.stdout.write(`${JSON.stringify({ task: task.url, slow: slow.url, paced: paced.url, latencyMs })}\n`);
const stop = async () => {
  await Promise.all([task.close(), slow.close(), paced.close()]);
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
