// The chaos run (docs/scale-out.md): worker processes on one PostgreSQL, sessions with parallel tool
// batches and approvals answered twice at once from a separate client process, a worker SIGKILLed at
// random moments and restarted, until every session completed. Counted from what the tools wrote and
// what the store holds; prints one JSON line of counts. Needs dist/ (npm run build).
// node test/chaos/run-chaos.mjs --workers=4 --sessions=200 [--url=postgres://...]
// A worker is killed `--killMinMs`-`--killMaxMs` after every worker is up (printed "ready"): on a
// loaded machine a restart can take longer than the kill interval, and kills on the wall clock alone
// killed workers before they claimed anything (0 of 30 sessions in 160 s at load 27). The run ends
// once every session completed, at `--timeoutMs`, or once nothing moved for `--stallMs` (default
// 120 s; 0: never): no tool started or ended and no session completed; `stalled` says which.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createSessionClient } from '../../dist/index.js';
import { PostgresSessionStore } from '../../dist/postgres/index.js';
import { readJsonLines, runsByCall, startChaosModel, startChaosRun } from './chaos-load.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { args, started, cluster, url, workers, sessions, timeoutMs, killMinMs, killMaxMs } =
  await startChaosRun({
    workers: 4,
    sessions: 200,
  });
const stallMs = Number(args.stallMs ?? 120_000);
const schema = `chaos_${process.pid}`;
const work = await mkdtemp(path.join(tmpdir(), 'agentloop-chaos-'));
const counter = path.join(work, 'tool-runs.jsonl');
const approvals = path.join(work, 'approvals.jsonl');
const server = await startChaosModel();
const store = new PostgresSessionStore({ connectionString: url, max: 4 }, { schema });
await store.migrate();
const config = { url, schema, counter, approvals, baseURL: server.url, concurrency: 8, leaseMs: 1_000 };

const spawnNode = (script) => {
  const child = spawn(process.execPath, [path.join(here, script), JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (d) => {
    if (process.env.CHAOS_DEBUG) process.stderr.write(d);
  });
  // Settles once the process is up (a worker prints "ready" once it has started) or gone.
  child.ready = new Promise((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('ready')) resolve();
    });
    child.once('exit', resolve);
  });
  return child;
};
const pool = Array.from({ length: workers }, () => spawnNode('chaos-worker.mjs'));
const approver = spawnNode('chaos-approver.mjs');
// Interrupted by hand: take the children and the cluster down too.
process.on('SIGINT', () => {
  for (const child of [...pool, approver]) child.kill('SIGKILL');
  void (cluster?.stop() ?? Promise.resolve()).then(() => process.exit(130));
});
const client = createSessionClient({ store });
const ids = Array.from({ length: sessions }, (_, i) => `chaos-${i}`);
for (const id of ids) await client.send(id, 'process the order');

let kills = 0;
let killing = true;
const killLoop = (async () => {
  while (killing) {
    // The kill interval counts from when every worker is up: time at work, not time starting.
    await Promise.all(pool.map((child) => child.ready));
    await new Promise((r) => setTimeout(r, killMinMs + Math.random() * (killMaxMs - killMinMs)));
    if (!killing) break;
    const i = Math.floor(Math.random() * pool.length);
    pool[i].kill('SIGKILL');
    kills++;
    pool[i] = spawnNode('chaos-worker.mjs');
  }
})();

const pending = new Set(ids);
/** When a tool last started or ended or a session last completed, and the counts then. */
let lastMove = { at: Date.now(), toolLines: 0, pending: pending.size };
let stalled = false;
while (pending.size > 0 && Date.now() - started < timeoutMs) {
  for (const id of [...pending]) {
    const view = await client.get(id).catch(() => undefined);
    if (view?.state === 'Completed' && view.inbox === 0) pending.delete(id);
  }
  const toolLines = (await readFile(counter, 'utf8').catch(() => '')).split('\n').length;
  if (toolLines !== lastMove.toolLines || pending.size !== lastMove.pending) {
    lastMove = { at: Date.now(), toolLines, pending: pending.size };
  } else if (stallMs > 0 && Date.now() - lastMove.at > stallMs) {
    stalled = true;
    break;
  }
  if (pending.size > 0) await new Promise((r) => setTimeout(r, 300));
}
killing = false;
// The workers first: a kill loop waiting for one still starting ends with its exit.
for (const child of pool) child.kill('SIGKILL');
await killLoop;
approver.kill('SIGTERM');
await new Promise((r) => setTimeout(r, 300));

// Count.
const runs = await readJsonLines(counter);
const answers = await readJsonLines(approvals);
const result = {
  workers,
  sessions,
  completed: sessions - pending.size,
  // Nothing moved for `stallMs` before every session completed: the run stopped there.
  stalled,
  kills,
  seconds: Math.round((Date.now() - started) / 100) / 10,
  toolRuns: runs.filter((r) => r.phase === 'start').length,
  recordedThenRunAgain: 0,
  nonIdempotentRunTwice: 0,
  idempotentReruns: 0,
  outcomeUnknown: 0,
  notRun: 0,
  otherResults: [],
  resultsWithoutRun: [],
  approvalsAccepted: answers.filter((a) => a.accepted).length,
  approvalsRefused: answers.filter((a) => !a.accepted).length,
  approvalsDoubled: 0,
  approvalsLost: 0,
  transcriptGaps: 0,
  duplicateSeqs: 0,
  unansweredCalls: 0,
};
const { starts: startsByKey, idempotentReruns, nonIdempotentRunTwice } = runsByCall(runs);
Object.assign(result, { idempotentReruns, nonIdempotentRunTwice });
const acceptedByCall = new Map();
for (const a of answers.filter((a) => a.accepted)) {
  const key = `${a.session}:${a.toolCallId}`;
  acceptedByCall.set(key, (acceptedByCall.get(key) ?? 0) + 1);
}
for (const n of acceptedByCall.values()) if (n > 1) result.approvalsDoubled++;
for (const id of ids) {
  const { entries } = await store.readTranscript(id);
  const seqs = entries.map((e) => e.seq);
  if (new Set(seqs).size !== seqs.length) result.duplicateSeqs++;
  if (seqs.some((s, i) => s !== i + 1)) result.transcriptGaps++;
  const recordedAt = new Map();
  const approvalEvents = new Map();
  for (const e of entries) {
    if (e.kind === 'tool_call_finished' && !recordedAt.has(e.toolCallId)) {
      recordedAt.set(e.toolCallId, Date.parse(e.at));
      if (e.result.startsWith('Outcome unknown')) result.outcomeUnknown++;
      if (/^Tool call "[^"]+" was not run:/.test(e.result)) result.notRun++;
      else if (!/^(looked up|wrote|charged) |^Outcome unknown/.test(e.result))
        result.otherResults.push(e.result.slice(0, 160));
      else if (/^(looked up|wrote|charged) /.test(e.result) && !startsByKey.has(`${id}:${e.toolCallId}`))
        result.resultsWithoutRun.push({ session: id, call: e.toolCallId, seq: e.seq, result: e.result });
    }
    if (e.kind === 'event' && e.event === 'approval_resolved') {
      // A restore replays an answer given after the last save and records it again (same inbox item):
      // one answer. Two inbox items (or an answer without one) for one call would be two answers.
      const seen = approvalEvents.get(e.data.toolCallId) ?? new Set();
      seen.add(e.data.inbox ?? `untagged-${e.seq}`);
      approvalEvents.set(e.data.toolCallId, seen);
    }
  }
  for (const [callId, at] of recordedAt) {
    const later = (startsByKey.get(`${id}:${callId}`) ?? []).filter((r) => r.t > at);
    result.recordedThenRunAgain += later.length;
  }
  for (const answers of approvalEvents.values()) if (answers.size > 1) result.approvalsDoubled++;
  const record = await store.load(id);
  const messages = record?.snapshot?.context?.messages ?? [];
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id));
  for (const m of messages) {
    for (const call of m.role === 'assistant' ? (m.tool_calls ?? []) : []) {
      if (!answered.has(call.id)) result.unansweredCalls++;
      if (call.function.name === 'charge' && !approvalEvents.has(call.id)) {
        // A charge the client approved (accepted) whose answer never reached the session.
        if (acceptedByCall.has(`${id}:${call.id}`)) result.approvalsLost++;
      }
    }
  }
}
result.stuck = [];
for (const id of [...pending].slice(0, 5)) {
  const view = await client.get(id).catch((e) => ({ state: String(e) }));
  result.stuck.push({ id, state: view?.state, inbox: view?.inbox, pending: view?.pendingApprovals?.length });
}
process.stdout.write(`${JSON.stringify(result)}\n`);
await store.close();
await server.close();
await cluster?.stop();
await rm(work, { recursive: true, force: true });
