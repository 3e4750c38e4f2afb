// The chaos run on a durable engine (docs/engines.md, "Chaos"), the same load as run-chaos.mjs: worker
// processes of the engine, sessions with parallel tool batches and an approval answered from this
// process, a random worker SIGKILLed `--kills` times while tools run and restarted, until every session
// completed. Restate's workers sit behind one address (a small HTTP/2 proxy here, as a load balancer
// would be) registered once; DBOS's take over a dead worker's turns through their executor leases.
// Counted from what the tools wrote and from the PostgreSQL session store the engines keep the
// sessions in; prints one JSON line of counts. Needs dist/ (npm run build). It stops and counts when
// every session completed, at `--timeoutMs`, or once nothing moved for `--stallMs` (default 120 s; 0:
// never): no tool started or ended and no session changed state; `stalled` and `stuck` say which.
// node test/chaos/run-engine-chaos.mjs --engine=restate|dbos --workers=3 --sessions=100 --kills=10
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PostgresSessionStore } from '../../dist/postgres/index.js';
import { startH2Proxy } from '../support/h2-proxy.mjs';
import { startRestateServer } from '../support/restate-server.mjs';
import { readJsonLines, runsByCall, startChaosModel, startChaosRun } from './chaos-load.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const {
  args,
  started,
  cluster,
  url: baseUrl,
  workers,
  sessions,
  timeoutMs,
  killMinMs,
  killMaxMs,
} = await startChaosRun({ workers: 3, sessions: 100 });
const engine = args.engine;
if (engine !== 'restate' && engine !== 'dbos') {
  process.stderr.write('run-engine-chaos: --engine=restate or --engine=dbos\n');
  await cluster?.stop();
  process.exit(2);
}
const maxKills = Number(args.kills ?? 10);
const stallMs = Number(args.stallMs ?? 120_000);

// DBOS keeps its system tables in the database: one of its own per run.
const database = `chaos_${engine}_${process.pid}`;
const url = await createDatabase(baseUrl, database);
const schema = 'agentloop';
const work = await mkdtemp(path.join(tmpdir(), `agentloop-chaos-${engine}-`));
const counter = path.join(work, 'tool-runs.jsonl');
const server = await startChaosModel();
const store = new PostgresSessionStore({ connectionString: url, max: 4 }, { schema });
await store.migrate();
const config = {
  engine,
  url,
  schema,
  counter,
  baseURL: server.url,
  leaseMs: Number(args.leaseMs ?? 3_000),
  toolMinMs: Number(args.toolMinMs ?? 5),
  toolMaxMs: Number(args.toolMaxMs ?? 40),
};

/** Restate's endpoints, by worker: the proxy sends each invocation to a live one. */
const backends = new Map();
const spawnWorker = () => {
  const child = spawn(
    process.execPath,
    [path.join(here, 'engine-chaos-worker.mjs'), JSON.stringify(config)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stderr.on('data', (d) => {
    if (process.env.CHAOS_DEBUG) process.stderr.write(d);
  });
  // CHAOS_LOG_DIR: each worker's output (the engine SDK's log, e.g. RESTATE_LOGGING=DEBUG) in a file of its own.
  if (process.env.CHAOS_LOG_DIR) {
    const log = createWriteStream(path.join(process.env.CHAOS_LOG_DIR, `worker-${child.pid}.log`));
    child.stdout.pipe(log);
    child.stderr.pipe(log);
  }
  child.ready = new Promise((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const port = /^ready (\d+)$/.exec(line)?.[1];
      if (port) backends.set(child, { port: Number(port) });
      if (line.startsWith('ready')) resolve();
    });
    child.once('exit', () => {
      const backend = backends.get(child);
      if (backend) proxy?.drop(backend.port);
      backends.delete(child);
      resolve();
    });
  });
  return child;
};

let restate;
let proxy;
if (engine === 'restate') {
  restate = await startRestateServer();
  const proxyLog = process.env.CHAOS_LOG_DIR
    ? createWriteStream(path.join(process.env.CHAOS_LOG_DIR, 'proxy.log'))
    : undefined;
  proxy = await startH2Proxy({
    pick: () => {
      const live = [...backends.values()];
      return live.length === 0 ? undefined : live[Math.floor(Math.random() * live.length)].port;
    },
    ...(proxyLog ? { log: (line) => proxyLog.write(`${Date.now()} ${line}\n`) } : {}),
  });
}
const pool = Array.from({ length: workers }, spawnWorker);
await Promise.all(pool.map((child) => child.ready));
if (restate) await restate.register(`http://127.0.0.1:${proxy.port}`);
const client = await engineClient();
process.on('SIGINT', () => {
  for (const child of pool) child.kill('SIGKILL');
  void Promise.all([restate?.stop(), cluster?.stop()]).then(() => process.exit(130));
});

const ids = Array.from({ length: sessions }, (_, i) => `chaos-${i}`);
for (const id of ids) await client.post(id, 'process the order');

/** Every answer this process gave: `session:call` -> accepted. */
const approved = new Map();
const killed = new Set();
let kills = 0;
/** The workers running a tool now. */
const runningTools = async () => {
  const open = new Map();
  for (const r of await readJsonLines(counter)) {
    if (r.phase === 'start') open.set(`${r.key}:${r.pid}`, r.pid);
    else open.delete(`${r.key}:${r.pid}`);
  }
  return new Set(open.values());
};
let killing = true;
const killLoop = (async () => {
  while (killing && kills < maxKills && Date.now() - started < timeoutMs) {
    await new Promise((r) => setTimeout(r, killMinMs + Math.random() * (killMaxMs - killMinMs)));
    // A worker while it runs a tool (the moment that matters); a quiet moment is waited out.
    const busy = await runningTools();
    const victims = pool.map((child, i) => [child, i]).filter(([child]) => busy.has(child.pid));
    if (!killing || victims.length === 0) continue;
    const i = victims[Math.floor(Math.random() * victims.length)][1];
    killed.add(pool[i].pid);
    pool[i].kill('SIGKILL');
    kills++;
    pool[i] = spawnWorker();
  }
})();

/**
 * A `state` call of the loop, bounded (30 s): one that hangs (an engine attempt held, a proxy that
 * lost its endpoint) would stop the loop, its answers to approvals and its stall check with it.
 */
let stateCallsTimedOut = 0;
const bounded = (call) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stateCallsTimedOut++;
      reject(new Error('state call timed out'));
    }, 30_000);
    call.then(resolve, reject).finally(() => clearTimeout(timer));
  });

const pending = new Set(ids);
/** Where each session and the tools stood when something last moved, and when that was. */
let lastMove = { at: Date.now(), toolLines: 0, views: new Map() };
let stalled = false;
while (pending.size > 0 && Date.now() - started < timeoutMs) {
  const views = new Map();
  for (const id of [...pending]) {
    const view = await bounded(client.state(id)).catch(() => undefined);
    views.set(id, { state: view?.state, turn: view?.turn, pending: view?.pendingApprovals?.length });
    if (view?.state === 'Completed') pending.delete(id);
    for (const call of view?.state === 'WaitingApproval' ? view.pendingApprovals : []) {
      const key = `${id}:${call.toolCallId}`;
      if (approved.get(key)) continue;
      const accepted = await client.approve(id, call.toolCallId).then(
        () => true,
        () => false,
      );
      approved.set(key, accepted);
    }
  }
  const toolLines = (await readFile(counter, 'utf8').catch(() => '')).split('\n').length;
  const moved =
    toolLines !== lastMove.toolLines ||
    views.size !== lastMove.views.size ||
    [...views].some(([id, at]) => JSON.stringify(lastMove.views.get(id)) !== JSON.stringify(at));
  if (moved) lastMove = { at: Date.now(), toolLines, views };
  else if (stallMs > 0 && Date.now() - lastMove.at > stallMs) {
    stalled = true;
    break;
  }
  if (pending.size > 0) await new Promise((r) => setTimeout(r, 300));
}
killing = false;
await killLoop;
for (const child of pool) child.kill('SIGKILL');
await Promise.all(pool.map((child) => child.ready));

// Count.
const runs = await readJsonLines(counter);
const result = {
  engine,
  workers,
  sessions,
  completed: sessions - pending.size,
  kills,
  stateCallsTimedOut,
  seconds: Math.round((Date.now() - started) / 100) / 10,
  // Nothing moved for `stallMs` before every session completed: the run stopped there.
  stalled,
  toolRuns: runs.filter((r) => r.phase === 'start').length,
  // A call run again though a live process had run it (only a crash may make a call run again).
  recordedThenRunAgain: 0,
  nonIdempotentRunTwice: 0,
  idempotentReruns: 0,
  outcomeUnknown: 0,
  // A non-idempotent call cut by a kill (started, never ended) answered anything but "outcome unknown".
  inFlightNotUnknown: 0,
  otherResults: [],
  resultsWithoutRun: [],
  approvalsAccepted: [...approved.values()].filter(Boolean).length,
  approvalsDoubled: 0,
  approvalsLost: 0,
  transcriptGaps: 0,
  duplicateSeqs: 0,
  duplicateMessages: 0,
  unansweredCalls: 0,
};
const { starts: startsByKey, ended: endedKeys, idempotentReruns, nonIdempotentRunTwice } = runsByCall(runs);
Object.assign(result, { idempotentReruns, nonIdempotentRunTwice });
for (const list of startsByKey.values()) {
  for (const earlier of list.slice(0, -1)) if (!killed.has(earlier.pid)) result.recordedThenRunAgain++;
}
for (const id of ids) {
  const { entries } = await store.readTranscript(id);
  const seqs = entries.map((e) => e.seq);
  if (new Set(seqs).size !== seqs.length) result.duplicateSeqs++;
  if (seqs.some((s, i) => s !== i + 1)) result.transcriptGaps++;
  const messages = entries.filter((e) => e.kind === 'message').map((e) => JSON.stringify(e.message));
  result.duplicateMessages += messages.length - new Set(messages).size;
  const approvalEvents = new Map();
  for (const e of entries) {
    if (e.kind === 'event' && e.event === 'approval_resolved') {
      approvalEvents.set(e.data.toolCallId, (approvalEvents.get(e.data.toolCallId) ?? 0) + 1);
    }
  }
  for (const n of approvalEvents.values()) if (n > 1) result.approvalsDoubled++;
  const record = await store.load(id);
  const conversation = record?.snapshot?.context?.messages ?? [];
  const answers = new Map(
    conversation.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content)]),
  );
  for (const m of conversation) {
    for (const call of m.role === 'assistant' ? (m.tool_calls ?? []) : []) {
      const key = `${id}:${call.id}`;
      const answer = answers.get(call.id);
      if (answer === undefined) {
        result.unansweredCalls++;
        continue;
      }
      if (answer.startsWith('Outcome unknown')) result.outcomeUnknown++;
      else if (!/^(looked up|wrote|charged) /.test(answer)) result.otherResults.push(answer.slice(0, 160));
      else if (!startsByKey.has(key)) result.resultsWithoutRun.push({ session: id, call: call.id, answer });
      const name = call.function.name;
      if (
        name !== 'lookup' &&
        startsByKey.has(key) &&
        !endedKeys.has(key) &&
        !answer.startsWith('Outcome unknown')
      )
        result.inFlightNotUnknown++;
      // An approval this process gave that never reached the session.
      if (name === 'charge' && approved.get(key) && !approvalEvents.has(call.id)) result.approvalsLost++;
    }
  }
}
// Every session that did not complete, named, where the last look saw it (read while the workers ran:
// Restate's state handler needs an endpoint).
result.stuck = [...pending].map((id) => ({ id, ...lastMove.views.get(id) }));
// Restate sessions left unfinished: the journals of the invocations not completed, for the reader (stderr).
if (pending.size > 0 && restate) process.stderr.write(`${JSON.stringify(await restateJournals())}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
await client.close();
await store.close();
await server.close();
proxy?.close();
await restate?.stop();
await dropDatabase(baseUrl, database);
await cluster?.stop();
await rm(work, { recursive: true, force: true });
process.exit(0);

/** The engine's client, as an application would use it. */
async function engineClient() {
  if (engine === 'restate') {
    const { restateClient } = await import('../../dist/engines/restate/index.js');
    const c = restateClient({ url: restate.ingress, agent: 'chaos' });
    return {
      post: (id, text) => c.post(id, text),
      state: (id) => c.state(id),
      approve: (id, call) => c.approve(id, call),
      close: async () => {},
    };
  }
  const { dbosClient } = await import('../../dist/engines/dbos/index.js');
  return dbosClient({ systemDatabaseUrl: url, agent: 'chaos' });
}

/** Restate's invocations not completed, each with its journal (admin API's SQL introspection). */
async function restateJournals() {
  const query = async (sql) => {
    const response = await fetch(`${restate.admin}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: sql }),
    });
    return response.ok
      ? (await response.json()).rows
      : { status: response.status, body: await response.text() };
  };
  const invocations = await query(
    "SELECT id, target, status, retry_count, last_failure, last_start_at, journal_size FROM sys_invocation WHERE status <> 'completed'",
  );
  if (!Array.isArray(invocations)) return { invocations };
  const ids = invocations.map((i) => `'${i.id}'`).join(',') || "''";
  const journal = await query(
    `SELECT id, index, entry_type, name, completed FROM sys_journal WHERE id IN (${ids}) ORDER BY id, index`,
  );
  return { invocations, journal };
}

async function createDatabase(base, name) {
  const { default: pg } = await import('pg');
  const admin = new pg.Client(base);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const target = new URL(base);
  target.pathname = `/${name}`;
  return target.href;
}

async function dropDatabase(base, name) {
  const { default: pg } = await import('pg');
  const admin = new pg.Client(base);
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
