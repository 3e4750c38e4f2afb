// What the file store itself costs per turn of bench/long-session.mjs's session (issue 28), without
// the agent: the store calls one turn makes (five transcript appends, as the agent groups them, and
// one save, all with a lease), on the memory store, the file store without flushes and the file store;
// then the flushes alone: an O_DSYNC append of a turn's lines, the record's atomic rewrite (format 1)
// and the in-place write of a record slot (format 2).
// npm run build && node bench/file-store-rest-point.mjs [--turns=300] [--rounds=3] [--dist=dist]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dist = path.resolve(args.dist ?? path.join(here, '..', 'dist'));
const turns = Number(args.turns ?? 300);
const rounds = Number(args.rounds ?? 3);
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
/** A file store module: in session/file-store/ since issue 38, in session/ in older builds. */
const loadFileStore = (file) => load(`session/file-store/${file}`).catch(() => load(`session/${file}`));
const { FileSessionStore, MemorySessionStore } = await load('index.js');

const message = (role, size) => ({ kind: 'message', message: { role, content: 'x'.repeat(size) } });
const snapshot = {
  status: 'active',
  value: 'AwaitingInput',
  context: { messages: { fromTranscript: 9 }, pad: 'y'.repeat(900) },
};
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(s.length * q))].toFixed(3);
  return `median ${at(0.5)} (p10 ${at(0.1)}, p90 ${at(0.9)})`;
};

/** One turn's store calls, as the agent makes them: the user message beside the model call, then the ledger. */
async function turn(store, id, i, options) {
  const user = store.appendTranscript(id, [message('user', 60)], options);
  const started = {
    kind: 'tool_call_started',
    toolCallId: `c${i}`,
    name: 'lookup',
    args: { key: 'a'.repeat(190) },
  };
  await store.appendTranscript(id, [started, message('assistant', 600)], options);
  await user;
  const finished = {
    kind: 'tool_call_finished',
    toolCallId: `c${i}`,
    name: 'lookup',
    result: 'r'.repeat(300),
    isError: false,
    durationMs: 0,
  };
  await store.appendTranscript(id, [finished], options);
  await store.appendTranscript(id, [message('tool', 300)], options);
  await store.appendTranscript(id, [message('assistant', 400)], options);
  await store.save({ id, state: 'AwaitingInput', snapshot, turns: i }, options);
}

const dir = await mkdtemp(path.join(tmpdir(), 'agentloop-rest-point-'));
try {
  const kinds = {
    memory: () => new MemorySessionStore(),
    'file, fsync: false': () => new FileSessionStore({ dir, fsync: false }),
    file: () => new FileSessionStore({ dir }),
  };
  const results = Object.fromEntries(Object.keys(kinds).map((k) => [k, { cpu: [], wall: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const [kind, create] of Object.entries(kinds)) {
      const store = create();
      const id = `s-${round}-${kind.replace(/\W+/g, '-')}`;
      const options = store.acquireLease
        ? { lease: await store.acquireLease(id, { owner: 'bench', leaseMs: 600_000 }) }
        : {};
      for (let i = 0; i < 20; i++) await turn(store, id, -i, options); // warm-up
      const cpu = process.cpuUsage();
      const t = performance.now();
      for (let i = 0; i < turns; i++) await turn(store, id, i, options);
      const used = process.cpuUsage(cpu);
      results[kind].wall.push((performance.now() - t) / turns);
      results[kind].cpu.push((used.user + used.system) / 1000 / turns);
      if (options.lease) await store.releaseLease(options.lease);
    }
  }
  console.log(
    `store calls of one turn (5 appends, 1 save), ms per turn over ${turns} turns, ${rounds} rounds:`,
  );
  for (const [kind, r] of Object.entries(results))
    console.log(`  ${kind.padEnd(18)} CPU ${stats(r.cpu)}; wall ${stats(r.wall)}`);

  // Builds before the kept-open transcript (issue 28) have no AppendFile: the first part only.
  const { AppendFile } = await loadFileStore('append-file.js').catch(() => ({}));
  const { writeFileAtomic } = await loadFileStore('durable-write.js');
  // Builds before the record slots (issue 28) rewrite the record by rename only.
  const slots = await loadFileStore('record-slots.js').catch(() => undefined);
  if (AppendFile) console.log('the flushes alone, ms per write (300 appends, 150 record rewrites):');
  for (const fsync of AppendFile ? [true, false] : []) {
    const out = new AppendFile(path.join(dir, `flush-${fsync}.jsonl`), fsync);
    for (const [what, n, write] of [
      ['append of 560 B', 300, () => out.append(`${'x'.repeat(559)}\n`)],
      [
        'record rewrite, 1.4 KB',
        150,
        () => writeFileAtomic(path.join(dir, `flush-${fsync}.json`), 'y'.repeat(1380), fsync),
      ],
      ...(slots
        ? [
            [
              'record slot write in place, 1.4 KB',
              150,
              (() => {
                let seq = 0;
                return () => {
                  seq++;
                  const file = path.join(dir, `slot-${fsync}-${seq % 2}.json`);
                  return slots.writeSlot(
                    file,
                    slots.sealRecord(`{"y":"${'y'.repeat(1372)}"}`, seq),
                    fsync,
                    seq <= 2,
                  );
                };
              })(),
            ],
          ]
        : []),
    ]) {
      const cpu = [];
      const wall = [];
      for (let i = 0; i < n; i++) {
        const c = process.cpuUsage();
        const t = performance.now();
        await write();
        wall.push(performance.now() - t);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
      }
      console.log(`  ${what}, fsync ${fsync}: wall ${stats(wall)}; CPU ${stats(cpu)}`);
    }
    out.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
