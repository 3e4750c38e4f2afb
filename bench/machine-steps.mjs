// Counts XState's work per session (actors, events, microsteps, snapshots, executed actions) for
// agentloop and for the XState floor's shape, with the model and the tool answering at once: a
// deterministic check that agentloop's statechart does no more steps than the design's bare shape.
// node bench/machine-steps.mjs (after npm run build)
import { z } from 'zod';
import { DOCUMENT, instantClient, runInstantFloor } from './lib/instant-task.mjs';

const m = await import('../dist/index.js');
function counter() {
  const c = {};
  const inspect = (e) => {
    const k = e.type === '@xstate.action' ? `action:${e.action.type}` : e.type;
    c[k] = (c[k] ?? 0) + 1;
  };
  return { c, inspect };
}
const lookup = m.defineTool({
  name: 'lookup',
  description: 'd',
  parameters: z.object({ key: z.string() }),
  execute: () => DOCUMENT,
});
const a = counter();
const agent = m.createAgent({
  client: instantClient,
  tools: [lookup],
  stream: false,
  loopControlTools: false,
  planning: false,
  contextWindow: false,
  inspect: a.inspect,
});
await agent.send('u');
agent.stop();
const f = counter();
await runInstantFloor(f.inspect);
const keys = [...new Set([...Object.keys(a.c), ...Object.keys(f.c)])].sort();
for (const k of keys)
  console.log(
    k.padEnd(40),
    'agentloop',
    String(a.c[k] ?? 0).padStart(4),
    'floor',
    String(f.c[k] ?? 0).padStart(4),
  );
