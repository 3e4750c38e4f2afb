// What tool-call ids the model makes up cost the shared machine (xs36, 2026-11-29). A tool runner's
// actor id names its first call (`tools:<call id>`), so its done event's type is new for every call
// id the model makes up; XState memoizes the transitions an event type selects on each state node
// (its `candidates-<type>` memo, kept for the machine's life), so a long-running process keeps one
// entry per tool batch it ever ran, on the machine every agent shares. The benches' scripted servers
// repeat their ids (call_0_0, ...), which hides it. Sessions of 10 one-call batches on `agentMachine`
// with instant effects, ids fixed or random; heap after a GC before and after. Since leak36 runner ids
// are `tools:<n>` from a small set, and random ids cost what fixed ones do (bench/README.md).
//   npm run build && node --expose-gc bench/runner-id-memo.mjs [--ids=random|fixed] [--sessions=3000]
//     [--dist=<a build's dist directory>]   (default: this checkout's dist)
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { runMachineSession } from './lib/instant-task.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dist = path.resolve(args.dist ?? path.join(here, '..', 'dist'));
const m = await import(pathToFileURL(path.join(dist, 'index.js')).href);
const random = (args.ids ?? 'random') === 'random';
const sessions = Number(args.sessions ?? 3000);
const BATCHES = 10;

const callId = (i) => (random ? `call_${Math.random().toString(36).slice(2, 14)}` : `call_${i}`);
const effects = {
  callLlm: async (input) => {
    const i = input.messages.filter((x) => x.role === 'assistant').length;
    const at = Date.now();
    if (i >= BATCHES)
      return {
        message: { role: 'assistant', content: 'done' },
        calls: [],
        finishReason: 'stop',
        usage: null,
        at,
      };
    const id = callId(i);
    const fn = { name: 'lookup', arguments: '{}' };
    return {
      message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: fn }] },
      calls: [{ id, name: 'lookup', argsText: '{}', args: {}, needsApproval: false }],
      finishReason: 'tool_calls',
      usage: null,
      at,
    };
  },
  runTools: async (input) =>
    input.calls.map((c) => ({ toolCallId: c.id, name: c.name, content: 'x', isError: false, durationMs: 0 })),
  hears: (type) => type === 'turn_end',
};
const session = () => runMachineSession(m, effects);
for (let i = 0; i < 200; i++) await session();
globalThis.gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < sessions; i++) await session();
await new Promise((r) => setTimeout(r, 50));
globalThis.gc();
const grown = process.memoryUsage().heapUsed - before;
process.stdout.write(
  `${random ? 'random' : 'fixed'} call ids: heap +${(grown / 1024 / 1024).toFixed(1)} MiB after ${sessions * BATCHES} tool batches ` +
    `(${(grown / sessions / BATCHES).toFixed(0)} B a batch, kept)\n`,
);
