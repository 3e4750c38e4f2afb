// What a session keeps alive mid-run, by constructor: a heap snapshot of the concurrent figure's run
// (50 ms server) at the moment its sessions made 5.5 model calls each on average, taken with N and
// with 2N sessions at once (one child process each); the difference divided by N is per session, the
// process's own fixed part (code, modules, the client) cancelled out. The live heap per session is
// what sets the concurrent figure's peak RSS: V8 lets the old generation grow to about four times what
// the last mark-compact kept (bench/README.md, "Memory per session: what an agent keeps").
//   npm run build && node bench/heap-per-session.mjs <harness> [--sessions=300] [--stream] [--top=40]
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sessions: { type: 'string', default: '300' },
    stream: { type: 'boolean', default: false },
    top: { type: 'string', default: '40' },
    child: { type: 'string' },
  },
});
const harnessName = positionals[0] ?? 'agentloop';

if (values.child) {
  // The child: run `sessions` sessions at once, snapshot once at 5.5 calls a session, print the file.
  const sessions = Number(values.sessions);
  const server = spawn(process.execPath, [path.join(here, 'lib/server.mjs')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve) =>
    readline.createInterface({ input: server.stdout }).once('line', resolve),
  );
  const { createHarness } = await import(`./harness/${harnessName}.mjs`);
  let calls = 0;
  let at = Number.POSITIVE_INFINITY;
  const counting = (...args) => {
    if (++calls === at) writeHeapSnapshot(values.child);
    return fetch(...args);
  };
  const harness = await createHarness({
    baseURL: JSON.parse(line).slow,
    stream: values.stream,
    fetch: counting,
  });
  await Promise.all(Array.from({ length: 20 }, () => harness.runSession()));
  at = calls + Math.round(sessions * 5.5);
  await Promise.all(Array.from({ length: sessions }, () => harness.runSession()));
  server.stdin.end();
  process.exit(0);
}

/** Self size and count by `type:name` (strings and numbers by type only). */
function byConstructor(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const groups = new Map();
  let total = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[0][snapshot.nodes[i + iType]];
    const name = /string|number/.test(type) ? '' : snapshot.strings[snapshot.nodes[i + iName]].slice(0, 50);
    const key = `${type}:${name}`;
    const group = groups.get(key) ?? { size: 0, count: 0 };
    group.size += snapshot.nodes[i + iSize];
    group.count++;
    total += snapshot.nodes[i + iSize];
    groups.set(key, group);
  }
  return { groups, total };
}

const n = Number(values.sessions);
const heaps = [n, 2 * n].map((sessions) => {
  const file = path.join(tmpdir(), `heap-per-session-${process.pid}-${sessions}.heapsnapshot`);
  const args = [fileURLToPath(import.meta.url), harnessName, `--sessions=${sessions}`, `--child=${file}`];
  if (values.stream) args.push('--stream');
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`the ${sessions}-session run failed (${run.status})`);
  const heap = byConstructor(file);
  rmSync(file, { force: true });
  return heap;
});
const [small, large] = heaps;
console.log(
  `${harnessName} (${values.stream ? 'streaming' : 'non-streaming'}): ${((large.total - small.total) / n / 1024).toFixed(1)} KiB live per session mid-run`,
);
const keys = new Set([...small.groups.keys(), ...large.groups.keys()]);
const rows = [...keys].map((key) => {
  const a = small.groups.get(key) ?? { size: 0, count: 0 };
  const b = large.groups.get(key) ?? { size: 0, count: 0 };
  return { key, bytes: (b.size - a.size) / n, count: (b.count - a.count) / n };
});
rows.sort((x, y) => y.bytes - x.bytes);
console.log('bytes/session  objects/session  type:constructor');
for (const row of rows.slice(0, Number(values.top)))
  console.log(`${row.bytes.toFixed(0).padStart(13)}  ${row.count.toFixed(2).padStart(15)}  ${row.key}`);
