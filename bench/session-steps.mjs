// What a session of each shape asks of XState, counted (init36, issue 36): the actors made (the agent
// actor included) and the steps the agent actor takes (events it processes, `xstate.init` included),
// for agent-step-cpu.mjs's `agent` mode (createAgent per session, streaming, over the real SDK to the
// shapes' scripted servers), one or more builds. Counts, so the machine's load does not move them.
//   npm run build && node bench/session-steps.mjs [--dists=<a>/dist,dist] [--sessions=5]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeShapes, FINAL, lookupTool, shapeOptions, startShapes } from './lib/engine-shapes.mjs';
import { flagArgs } from './lib/flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = flagArgs();
const dists = (args.dists ?? path.join(here, '..', 'dist')).split(',').map((d) => path.resolve(d));
const sessions = Number(args.sessions ?? 5);
const SHAPES = await startShapes();

for (const dist of dists) {
  const m = await import(`${dist}/index.js`);
  const lookup = lookupTool(m.defineTool);
  const cells = [];
  for (const shape of ['text', 'batch', 'chain']) {
    const count = { actors: 0, steps: 0, byActor: new Map(), byStep: new Map() };
    for (let n = 0; n < sessions; n++) {
      const agent = m.createAgent({
        ...shapeOptions(SHAPES, shape),
        tools: [lookup],
        sessionId: `${shape}.s${n}`,
        inspect: (e) => {
          const root = e.actorRef.sessionId === e.rootId;
          if (e.type === '@xstate.actor') {
            count.actors++;
            const name = root ? 'agent' : String(e.actorRef.src).split(':')[0];
            count.byActor.set(name, (count.byActor.get(name) ?? 0) + 1);
          } else if (e.type === '@xstate.event' && root) {
            count.steps++;
            const type = e.event.type.startsWith('xstate.done.actor.tools:')
              ? 'xstate.done.actor.tools:*'
              : e.event.type;
            count.byStep.set(type, (count.byStep.get(type) ?? 0) + 1);
          }
        },
      });
      const result = await agent.send('look the values up');
      agent.stop();
      if (result.response !== FINAL) throw new Error(`unexpected ${result.response}`);
    }
    const per = (map) => [...map].map(([k, v]) => `${k} ${v / sessions}`).join(', ');
    cells.push(
      `${shape}: ${count.actors / sessions} actors (${per(count.byActor)}); ` +
        `${count.steps / sessions} steps (${per(count.byStep)})`,
    );
  }
  console.log(`${dist}\n  ${cells.join('\n  ')}`);
}
await closeShapes(SHAPES);
