// Bytes a resting session holds: N agents each run `turns` turns of the bench's task (11 model calls a
// turn, answered at once: no network), then rest; heap after GC per session, and the same conversations
// kept as plain arrays (what a hand-written loop keeps; strings shared as in the agent), per session.
//   npm run build && node --expose-gc bench/session-memory.mjs [--dist=dist] [--turns=1] [--sessions=300] [--store=none|file]
// turns=1: 23 messages (system, user, 10 tool rounds, answer); turns=9: 199 messages.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagArgs } from './lib/flags.mjs';
import { CALLS, DOCUMENT, modelReply } from './lib/instant-task.mjs';
import { z } from './lib/root-deps.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dist = path.resolve(args.dist ?? path.join(here, '..', 'dist'));
const turns = Number(args.turns ?? 1);
const sessions = Number(args.sessions ?? 300);
const m = await import(`${dist}/index.js`);
/** Answers at once, counting replies since the last user message: every turn has 11 model calls. */
const client = {
  apiKey: 'instant',
  chat: {
    completions: {
      create: async (body) => {
        let i = 0;
        for (let k = body.messages.length - 1; k >= 0 && body.messages[k].role !== 'user'; k--)
          if (body.messages[k].role === 'assistant') i++;
        const finish = i < CALLS - 1 ? 'tool_calls' : 'stop';
        const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
        return { choices: [{ message: modelReply(i), finish_reason: finish }], usage };
      },
    },
  },
};
const tool = m.defineTool({
  name: 'lookup',
  description: 'd',
  parameters: z.object({ key: z.string() }),
  execute: () => DOCUMENT,
});
const dir = mkdtempSync(path.join(tmpdir(), 'session-memory-'));
const store = args.store === 'file' ? { store: new m.FileSessionStore({ dir, fsync: false }) } : {};
const options = {
  client,
  model: 'gpt-4o-mini',
  instructions: 'You are a bench agent.',
  tools: [tool],
  stream: false,
  loopControlTools: false,
  planning: false,
  contextWindow: false,
  ...store,
};
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
for (let i = 0; i < 5; i++) {
  const agent = m.createAgent(options);
  await agent.send('warm-up');
  await agent.close();
}
const before = heap();
const agents = [];
for (let i = 0; i < sessions; i++) {
  const agent = m.createAgent(options);
  await agent.ready();
  for (let t = 0; t < turns; t++) await agent.send(`turn ${t}`);
  await agent.flush();
  agents.push(agent);
}
const resting = heap();
const copy = (v) =>
  Array.isArray(v)
    ? v.map(copy)
    : v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]))
      : v;
const plain = agents.map((a) => copy(a.messages));
const withPlain = heap();
const perSession = (resting - before) / sessions;
const conversation = (withPlain - resting) / sessions;
process.stdout.write(
  `${JSON.stringify({
    dist,
    store: args.store ?? 'none',
    turns,
    messages: agents[0].messages.length,
    sessions,
    heapBytesPerSession: Math.round(perSession),
    conversationBytesPerSession: Math.round(conversation),
    beyondConversation: Math.round(perSession - conversation),
    plainKept: plain.length,
  })}\n`,
);
await Promise.all(agents.map((a) => a.close()));
rmSync(dir, { recursive: true, force: true });
