// Machine-level micro benchmark: per model call cost of the XState floor vs agentloop's machine vs the
// whole agent, with model and tools answering at once (no network). CPU-bound, so comparable in one run.
import { CALLS, DOCUMENT, instantClient, runInstantFloor, runMachineSession } from './lib/instant-task.mjs';

const dist = process.argv[2] || new URL('../dist', import.meta.url).pathname;
const build = await import(`${dist}/index.js`);
const { createAgent, defineTool } = build;
const { z } = await import('zod');
const floorSession = () => runInstantFloor();
const machineSession = () => runMachineSession(build);
// whole agent with an instant client
const lookup = defineTool({
  name: 'lookup',
  description: 'd',
  parameters: z.object({ key: z.string() }),
  execute: async () => DOCUMENT,
});
async function agentSession() {
  const agent = createAgent({
    client: instantClient,
    tools: [lookup],
    stream: false,
    loopControlTools: false,
    planning: false,
    contextWindow: false,
  });
  await agent.send('u');
  agent.stop();
}
const kinds = { floor: floorSession, machine: machineSession, agent: agentSession };
const which = (process.argv[3] ?? 'floor,machine,agent').split(',');
const sessions = Number(process.argv[4] ?? 2000);
for (const k of which) for (let i = 0; i < 200; i++) await kinds[k]();
const out = {};
for (let round = 0; round < 3; round++)
  for (const k of which) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < sessions; i++) await kinds[k]();
    const us = Number(process.hrtime.bigint() - t0) / 1e3 / sessions / CALLS;
    out[k] ??= [];
    out[k].push(us);
  }
for (const k of which) {
  const v = out[k].sort((a, b) => a - b)[1];
  console.log(
    k.padEnd(8),
    v.toFixed(1),
    'us/call',
    which[0] !== k ? `(${(v / out[which[0]].sort((a, b) => a - b)[1]).toFixed(2)}x ${which[0]})` : '',
  );
}
