// Persistence cost on PostgreSQL (issue 14): per rest point (the record save) and per tool call (its
// two transcript lines, each awaited as the agent does), p50 and p99, on a throwaway cluster with
// PostgreSQL's durable defaults (fsync on). Then sessions per second with 1, 2 and 4 worker processes
// on the bench task shape (one tool call per model turn, 50 ms model latency).
// npm run build && node bench/postgres-persistence.mjs [--rounds=400] [--sessions=60]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSessionClient } from '../dist/index.js';
import { PostgresSessionStore } from '../dist/postgres/index.js';
import { startScriptedServer } from '../dist/testing/index.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const rounds = Number(args.rounds ?? 400);
const sessions = Number(args.sessions ?? 60);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 100) / 100;
};

const cluster = await startPostgresCluster({ durable: true });
const out = {};
try {
  const store = new PostgresSessionStore({ connectionString: cluster.url }, { schema: 'bench' });
  await store.migrate();
  const lease = await store.acquireLease('b1', { owner: 'bench', leaseMs: 60_000 });
  const snapshot = {
    status: 'active',
    value: 'AwaitingInput',
    context: {
      messages: Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `message ${i} `.repeat(20) })),
    },
  };
  const saves = [];
  const calls = [];
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    await store.save({ id: 'b1', state: 'AwaitingInput', snapshot, turns: i }, { lease });
    saves.push(performance.now() - t);
    t = performance.now();
    await store.appendTranscript(
      'b1',
      [{ kind: 'tool_call_started', toolCallId: `c${i}`, name: 'lookup', args: { q: i } }],
      { lease },
    );
    await store.appendTranscript(
      'b1',
      [
        {
          kind: 'tool_call_finished',
          toolCallId: `c${i}`,
          name: 'lookup',
          result: 'x'.repeat(1024),
          isError: false,
          durationMs: 1,
        },
      ],
      { lease },
    );
    calls.push(performance.now() - t);
  }
  out.restPointMs = { p50: pct(saves, 50), p99: pct(saves, 99) };
  out.toolCallMs = { p50: pct(calls, 50), p99: pct(calls, 99) };
  await store.close();

  const server = await startScriptedServer({
    latencyMs: 50,
    record: false,
    scenario: {
      turns: [
        ...Array.from({ length: 5 }, (_, i) => ({
          toolCalls: [{ name: 'lookup', arguments: { item: `i${i}` } }],
        })),
        { content: 'done' },
      ],
    },
  });
  out.sessionsPerSecond = {};
  for (const workers of [1, 2, 4]) {
    const schema = `bench_w${workers}`;
    const s = new PostgresSessionStore({ connectionString: cluster.url }, { schema });
    await s.migrate();
    const config = JSON.stringify({ url: cluster.url, schema, baseURL: server.url });
    const children = Array.from({ length: workers }, () =>
      spawn(process.execPath, [path.join(here, 'lib', 'postgres-bench-worker.mjs'), config], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    await Promise.all(children.map((c) => new Promise((r) => c.stdout.once('data', r))));
    const client = createSessionClient({ store: s, pollMs: 20 });
    const t = performance.now();
    await Promise.all(Array.from({ length: sessions }, (_, i) => client.send(`s${i}`, 'go')));
    await Promise.all(
      Array.from({ length: sessions }, (_, i) =>
        client.waitFor(`s${i}`, { states: ['Completed'], timeoutMs: 300_000 }),
      ),
    );
    out.sessionsPerSecond[workers] = Math.round((sessions / ((performance.now() - t) / 1000)) * 10) / 10;
    for (const c of children) c.kill('SIGKILL');
    await s.close();
  }
  out.speedup4v1 = Math.round((out.sessionsPerSecond[4] / out.sessionsPerSecond[1]) * 100) / 100;
  await server.close();
} finally {
  await cluster.stop();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
